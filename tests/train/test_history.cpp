// train/history.h: a checkpoint's metrics history read back field by field, every refusal naming the entry and key.
#include "train/history.h"

#include "test_util.h"

namespace cppgrad {
namespace {

TEST(History, ReadsEachEntrysFieldsInOrder) {
  const auto entries = train::parse_history(R"([{"step": 2, "loss": 1.5}, {"loss": 0.5, "step": 4}])",
                                            {{"step", /*count=*/true}, {"loss"}}, /*non_negative=*/true, 10);
  EXPECT_EQ(entries, (std::vector<std::vector<double>>{{2, 1.5}, {4, 0.5}}));
  EXPECT_TRUE(train::parse_history("[]", {{"loss"}}, false, 0).empty());
}

TEST(History, RefusesWhatIsNotAFiniteNumberNamingTheEntryAndKey) {
  EXPECT_THROW_MSG(train::parse_history("{}", {{"loss"}}, false, 10), std::invalid_argument, "metadata 'history' is not a JSON array");
  EXPECT_THROW_MSG(train::parse_history("[1]", {{"loss"}}, false, 10), std::invalid_argument, "history entry 1 is not an object");
  EXPECT_THROW_MSG(train::parse_history(R"([{"loss": 1}, {}])", {{"loss"}}, false, 10), std::invalid_argument,
                   "history entry 2: 'loss' must be a finite number");
  EXPECT_THROW_MSG(train::parse_history(R"([{"loss": -1}])", {{"loss"}}, true, 10), std::invalid_argument,
                   "history entry 1: 'loss' must be a finite number >= 0");
  EXPECT_NO_THROW(train::parse_history(R"([{"loss": -1}])", {{"loss"}}, false, 10));
  EXPECT_THROW_MSG(train::parse_history(R"([{"step": 1.5}])", {{"step", true}}, false, 10), std::invalid_argument,
                   "history entry 1: 'step' must be a whole number");
  EXPECT_THROW_MSG(train::parse_history(R"([{"step": 18014398509481985}])", {{"step", true}}, false, 10),
                   std::invalid_argument, "'step' must be a whole number");
}

// The history is read as the parser goes, no JSON tree, within what the run allows: at most max_entries entries, each
// a flat object (a checkpoint's 16 MiB of "[{},{},...]" once cost 581 MB before its refusal).
TEST(History, IsBoundedByTheEntriesTheRunAllowsAndReadsNoTree) {
  const std::vector<train::HistoryField> fields = {{"step", /*count=*/true}, {"loss"}};
  const std::string two = R"([{"step": 1, "loss": 1}, {"step": 2, "loss": 0.5, "val_bpb": 3}])";
  EXPECT_EQ(train::parse_history(two, fields, true, 2).size(), 2u);  // a key of no field is passed over
  EXPECT_THROW_MSG(train::parse_history(two, fields, true, 1), std::invalid_argument,
                   "metadata 'history' holds more than 1 entries");
  EXPECT_THROW_MSG(train::parse_history("[{}]", fields, true, 0), std::invalid_argument,
                   "metadata 'history' holds more than ");
  EXPECT_THROW_MSG(train::parse_history(R"([{"step": [1], "loss": 1}])", fields, true, 5), std::invalid_argument,
                   "metadata 'history' nests arrays and objects more than 2 deep");
  EXPECT_THROW_MSG(train::parse_history(R"([{"step": )" + std::string(100'000, '[') + std::string(100'000, ']') + "}]",
                                        fields, true, 5),
                   std::invalid_argument, "metadata 'history' nests arrays and objects more than 2 deep");
  EXPECT_THROW_MSG(train::parse_history(std::string(100'000, '[') + std::string(100'000, ']'), fields, true, 5),
                   std::invalid_argument, "history entry 1 is not an object");
  EXPECT_THROW_MSG(train::parse_history(R"([{"step": 1, "loss": 1},)", fields, true, 5), std::invalid_argument,
                   "metadata 'history' is not JSON: ");
  EXPECT_THROW_MSG(train::parse_history(R"([[1]])", fields, true, 5), std::invalid_argument,
                   "history entry 1 is not an object");
  // Many keys in one entry: 3 values an entry besides the fields' 2 pass, more do not.
  const std::string extra = R"([{"step": 1, "loss": 1, "a": 1, "b": 2}])";
  EXPECT_EQ(train::parse_history(extra, fields, true, 1).size(), 1u);
  EXPECT_THROW_MSG(train::parse_history(R"([{"step": 1, "loss": 1, "a": 1, "b": 2, "c": 3}])", fields, true, 1),
                   std::invalid_argument, "metadata 'history' holds more than 6 JSON values");
  // A repeated key: the last value, as a JSON tree keeps it.
  EXPECT_EQ(train::parse_history(R"([{"step": 1, "loss": "x", "loss": 2}])", fields, true, 1),
            (std::vector<std::vector<double>>{{1, 2}}));
}

TEST(History, WritesWhatItReadsBackExactly) {
  const std::vector<train::HistoryField> fields = {{"step", /*count=*/true}, {"loss"}};
  const std::vector<std::vector<double>> entries = {{100, 2.0 / 3.0}, {200, 0.1 + 0.2}};
  const std::string json = train::history_json(fields, entries);
  EXPECT_EQ(train::parse_history(json, fields, /*non_negative=*/true, 2), entries);
  EXPECT_EQ(train::history_jsonl(fields, entries).substr(0, 13), R"({"loss":0.666)");
  EXPECT_EQ(std::count(json.begin(), json.end(), '{'), 2);
  EXPECT_EQ(train::history_json(fields, {}), "[]");
  EXPECT_THROW_MSG(train::history_json(fields, {{1}}), std::invalid_argument, "history entry of 1 values for 2 fields");
}

}  // namespace
}  // namespace cppgrad
