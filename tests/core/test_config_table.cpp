// core/config_table.h: a config declared once, as rows, gives the flag parsing, the bounds, the JSON (a key an older
// file lacks takes its default) and the resume check.
#include "core/config_table.h"

#include "test_util.h"

namespace cppgrad {
namespace {

enum class Shape { round, square };

struct Inner {
  std::int64_t width = 8;
};

struct Toy {
  std::string name = "toy";
  Inner inner;
  double rate = 0.5;
  std::uint64_t seed = 3;
  std::int64_t steps = 10;
  Shape shape = Shape::round;
  std::pair<std::int64_t, std::int64_t> size{2, 3};  // a type of its own: "2x3"
};

std::pair<std::int64_t, std::int64_t> parse_size(const std::string& text) {
  const auto x = text.find('x');
  if (x == std::string::npos || x == 0 || x + 1 == text.size()) throw std::invalid_argument("must be AxB, got '" + text + "'");
  return {std::stoll(text.substr(0, x)), std::stoll(text.substr(x + 1))};
}
std::string size_text(const std::pair<std::int64_t, std::int64_t>& s) { return fmt::format("{}x{}", s.first, s.second); }

const ConfigTable<Toy>& toy_table() {
  static const ConfigTable<Toy> table = {
      field<Toy>("name", "data", "a name", at(&Toy::name), not_empty("something")),
      field<Toy>("inner-width", "model", "a nested size", at(&Toy::inner, &Inner::width), in_range(1, 64)),
      field<Toy>("rate", "training", "a rate", at(&Toy::rate), in_interval(0, 1, true)),
      field<Toy>("seed", "training", "a seed", at(&Toy::seed)),
      field<Toy>("steps", "training", "steps", at(&Toy::steps), in_range(1, 100), OnResume::may_change),
      choice<Toy>("shape", "model", "round | square", at(&Toy::shape),
                         Choices<Shape>{{"round", Shape::round}, {"square", Shape::square}}),
      written_unless_default(parsed<Toy>(
          "size", "model", "AxB", at(&Toy::size),
          std::function<std::pair<std::int64_t, std::int64_t>(const std::string&)>(parse_size),
          std::function<std::string(const std::pair<std::int64_t, std::int64_t>&)>(size_text))),
  };
  return table;
}

TEST(ConfigTable, FlagsSetTheirFieldsParsedByTheFieldsType) {
  Toy c;
  toy_table().set_flag(c, "inner-width", "32");
  toy_table().set_flag(c, "rate", "0.25");
  toy_table().set_flag(c, "seed", "18446744073709551615");
  toy_table().set_flag(c, "shape", "square");
  EXPECT_EQ(c.inner.width, 32);
  EXPECT_EQ(c.rate, 0.25);
  EXPECT_EQ(c.seed, 18446744073709551615ull);
  EXPECT_EQ(c.shape, Shape::square);
  EXPECT_THROW_MSG(toy_table().set_flag(c, "inner-width", "3x"), std::invalid_argument, "--inner-width: '3x' is not a whole number");
  EXPECT_THROW_MSG(toy_table().set_flag(c, "shape", "oval"), std::invalid_argument,
                   "--shape must be round or square, got 'oval'");
}

TEST(ConfigTable, AWrongValueIsRefusedNamingTheFlag) {
  Toy c;
  c.inner.width = 65;
  EXPECT_THROW_MSG(toy_table().check(c), std::invalid_argument, "--inner-width must be in 1..64, got 65");
  c = Toy{};
  c.rate = 1;
  EXPECT_THROW_MSG(toy_table().check(c), std::invalid_argument, "--rate must be in [0, 1), got 1");
  c = Toy{};
  c.name = "";
  EXPECT_THROW_MSG(toy_table().check(c), std::invalid_argument, "--name must name something");
  EXPECT_NO_THROW(toy_table().check(Toy{}));
}

TEST(ConfigTable, JsonRoundTripsUnderTheFlagsKeys) {
  Toy c;
  c.inner.width = 16, c.rate = 0.125, c.shape = Shape::square, c.name = "x";
  const std::string json = toy_table().to_json(c);
  EXPECT_EQ(json, R"({"inner_width":16,"name":"x","rate":0.125,"seed":3,"shape":"square","steps":10})");
  const Toy back = toy_table().from_json(json);
  EXPECT_TRUE(toy_table().mismatched(c, back).empty());
  EXPECT_EQ(back.steps, 10);
}

TEST(ConfigTable, AKeyAnOlderFileLacksTakesItsDefault) {
  const Toy c = toy_table().from_json(R"({"inner_width":16,"name":"old"})");
  EXPECT_EQ(c.inner.width, 16);
  EXPECT_EQ(c.name, "old");
  EXPECT_EQ(c.shape, Shape::round);
  EXPECT_EQ(c.rate, 0.5);
}

TEST(ConfigTable, HostileJsonIsRefusedNamingTheKey) {
  EXPECT_THROW_MSG(toy_table().from_json("[1]"), std::invalid_argument, "not a JSON object");
  EXPECT_THROW_MSG(toy_table().from_json(R"({"inner_width":1e30})"), std::invalid_argument,
                   "config 'inner_width' must be an integer in range, got");
  EXPECT_THROW_MSG(toy_table().from_json(R"({"seed":-1})"), std::invalid_argument, "config 'seed' must be an integer in range");
  EXPECT_THROW_MSG(toy_table().from_json(R"({"rate":"fast"})"), std::invalid_argument, "config 'rate' has the wrong type");
  EXPECT_THROW_MSG(toy_table().from_json(R"({"shape":"oval"})"), std::invalid_argument,
                   "config 'shape' must be round or square, got 'oval'");
}

TEST(ConfigTable, ResumeComparesTheFieldsThatMustMatch) {
  Toy a, b;
  b.steps = 50;  // may change
  EXPECT_TRUE(toy_table().mismatched(a, b).empty());
  b.inner.width = 9, b.name = "other";
  EXPECT_EQ(toy_table().mismatched(a, b), (std::vector<std::string>{"inner_width", "name"}));
}

TEST(ConfigTable, DefaultsAreShownAsFlagText) {
  const Toy d;
  EXPECT_EQ(config_text(toy_table().row("rate").get(d)), "0.5");
  EXPECT_EQ(config_text(toy_table().row("shape").get(d)), "round");
  EXPECT_EQ(config_text(toy_table().row("inner-width").get(d)), "8");
}

// A parsed row: its own type at the flag, its text in the JSON, and written only when not the default here.
TEST(ConfigTable, AParsedRowCarriesItsTypeAsTextAndMayBeLeftOutAtItsDefault) {
  Toy t;
  EXPECT_EQ(toy_table().to_json(t).find("size"), std::string::npos);  // the default: no key
  toy_table().set_flag(t, "size", "4x5");
  EXPECT_EQ(t.size, (std::pair<std::int64_t, std::int64_t>{4, 5}));
  EXPECT_NE(toy_table().to_json(t).find(R"("size":"4x5")"), std::string::npos);
  EXPECT_EQ(toy_table().from_json(toy_table().to_json(t)).size, t.size);
  EXPECT_EQ(toy_table().from_json(toy_table().to_json(Toy{})).size, Toy{}.size);
  EXPECT_THROW_MSG(toy_table().set_flag(t, "size", "big"), std::invalid_argument, "--size must be AxB, got 'big'");
  EXPECT_EQ(toy_table().mismatched(t, Toy{}), std::vector<std::string>{"size"});
}

// A part with a table of its own (a model's config), nested in a run's: its flag rows become the run's flags under its
// names, its rows without a flag stay its own, and each table's JSON holds its own rows only.
struct Part {
  std::int64_t n_width = 4;  // set by --width
  std::int64_t rows = 7;     // no flag: the data sets it
  bool operator==(const Part&) const = default;
};

const ConfigTable<Part>& part_table() {
  static const ConfigTable<Part> table = {
      with_role(FieldRole::size,
                named("n_width", field<Part>("width", "model", "a width", at(&Part::n_width), in_range(1, 64)))),
      named("rows", field<Part>("", "model", "rows", at(&Part::rows), in_range(1, 100))),
  };
  return table;
}

struct ToyRun {
  std::int64_t steps = 10;
  Part part;
};

const ConfigTable<ToyRun>& run_table() {
  static const ConfigTable<ToyRun> table(join<ToyRun>({{field<ToyRun>("steps", "training", "steps", at(&ToyRun::steps),
                                                             in_range(1, 100), OnResume::may_change)},
                                                 nested(part_table(), &ToyRun::part)}));
  return table;
}

TEST(ConfigTable, ANestedTablesFlagsAreTheRunsAndItsJsonItsOwn) {
  ASSERT_EQ(run_table().rows().size(), 2u);  // steps, and the part's one row with a flag
  ToyRun r;
  run_table().set_flag(r, "width", "16");
  EXPECT_EQ(r.part.n_width, 16);
  EXPECT_EQ(run_table().to_json(r), R"({"steps":10})");
  EXPECT_EQ(part_table().to_json(r.part), R"({"n_width":16,"rows":7})");
  EXPECT_EQ(part_table().from_json(part_table().to_json(r.part)), r.part);
  EXPECT_EQ(run_table().mismatched(ToyRun{}, r), std::vector<std::string>{"width"});  // as the user types it
  run_table().set_flag(r, "width", "99");
  EXPECT_THROW_MSG(run_table().check(r), std::invalid_argument, "--width must be in 1..64, got 99");
  Part p;
  p.rows = 0;  // a row no flag sets is named by its name
  EXPECT_THROW_MSG(part_table().check(p), std::invalid_argument, "rows must be in 1..100, got 0");
  // The run's own JSON does not take the part's keys; every_row does, by name or by the flag's spelling, not both.
  EXPECT_THROW_MSG(run_table().from_json(R"({"n_width":8})"), std::invalid_argument,
                   "config has the key \"n_width\", which this program does not know");
  using Keys = ConfigTable<ToyRun>::Keys;
  EXPECT_EQ(run_table().from_json(R"({"n_width":8})", Keys::every_row).part.n_width, 8);
  EXPECT_EQ(run_table().from_json(R"({"width":9})", Keys::every_row).part.n_width, 9);
  EXPECT_THROW_MSG(run_table().from_json(R"({"width":9,"n_width":8})", Keys::every_row), std::invalid_argument,
                   "config gives both 'n_width' and 'width': give one");
  EXPECT_THROW_MSG(part_table().from_json(R"({"n_width":"wide"})", ConfigTable<Part>::Keys::stored, "model"),
                   std::invalid_argument, "model 'n_width' must be an integer in range, got \"wide\"");
}

// A row is the model's architecture unless it says otherwise: a field added later is then pinned by a finetune and
// refused by a format made for one architecture, the safe side; a nested row keeps its role.
TEST(ConfigTable, ARowIsArchitectureUnlessItSaysOtherwise) {
  EXPECT_EQ(part_table().rows()[1].role, FieldRole::architecture);  // rows: no role given
  EXPECT_EQ(part_table().rows()[0].role, FieldRole::size);
  EXPECT_EQ(run_table().row("width").role, FieldRole::size);
  EXPECT_EQ(with_role(FieldRole::training, field<Part>("width", "model", "w", at(&Part::n_width))).role,
            FieldRole::training);
}

// A row may not go by another's name or flag: the run's max_len beside a nested max_len would read each other's keys.
TEST(ConfigTable, TwoRowsOfOneNameAreRefusedWhenTheTableIsBuilt) {
  const auto twice = [] {
    return ConfigTable<ToyRun>(join<ToyRun>({{field<ToyRun>("n-width", "model", "steps", at(&ToyRun::steps))},
                                             nested(part_table(), &ToyRun::part)}));
  };
  EXPECT_THROW_MSG(twice(), std::logic_error, "ConfigTable: two rows go by 'n_width'");
  EXPECT_NO_THROW(run_table());
}

}  // namespace
}  // namespace cppgrad
