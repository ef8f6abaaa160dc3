// train/history.h: a checkpoint's metrics history read back field by field, every refusal naming the entry and key.
#include "train/history.h"

#include "test_util.h"

namespace cppgrad {
namespace {

TEST(History, ReadsEachEntrysFieldsInOrder) {
  const auto entries = train::parse_history(R"([{"step": 2, "loss": 1.5}, {"loss": 0.5, "step": 4}])",
                                            {{"step", /*count=*/true}, {"loss"}}, /*non_negative=*/true);
  EXPECT_EQ(entries, (std::vector<std::vector<double>>{{2, 1.5}, {4, 0.5}}));
  EXPECT_TRUE(train::parse_history("[]", {{"loss"}}, false).empty());
}

TEST(History, RefusesWhatIsNotAFiniteNumberNamingTheEntryAndKey) {
  EXPECT_THROW_MSG(train::parse_history("{}", {{"loss"}}, false), std::invalid_argument, "metadata 'history' is not a JSON array");
  EXPECT_THROW_MSG(train::parse_history("[1]", {{"loss"}}, false), std::invalid_argument, "history entry 1 is not an object");
  EXPECT_THROW_MSG(train::parse_history(R"([{"loss": 1}, {}])", {{"loss"}}, false), std::invalid_argument,
                   "history entry 2: 'loss' must be a finite number");
  EXPECT_THROW_MSG(train::parse_history(R"([{"loss": -1}])", {{"loss"}}, true), std::invalid_argument,
                   "history entry 1: 'loss' must be a finite number >= 0");
  EXPECT_NO_THROW(train::parse_history(R"([{"loss": -1}])", {{"loss"}}, false));
  EXPECT_THROW_MSG(train::parse_history(R"([{"step": 1.5}])", {{"step", true}}, false), std::invalid_argument,
                   "history entry 1: 'step' must be a whole number");
  EXPECT_THROW_MSG(train::parse_history(R"([{"step": 18014398509481985}])", {{"step", true}}, false),
                   std::invalid_argument, "'step' must be a whole number");
}

TEST(History, WritesWhatItReadsBackExactly) {
  const std::vector<train::HistoryField> fields = {{"step", /*count=*/true}, {"loss"}};
  const std::vector<std::vector<double>> entries = {{100, 2.0 / 3.0}, {200, 0.1 + 0.2}};
  const std::string json = train::history_json(fields, entries);
  EXPECT_EQ(train::parse_history(json, fields, /*non_negative=*/true), entries);
  EXPECT_EQ(train::history_jsonl(fields, entries).substr(0, 13), R"({"loss":0.666)");
  EXPECT_EQ(std::count(json.begin(), json.end(), '{'), 2);
  EXPECT_EQ(train::history_json(fields, {}), "[]");
  EXPECT_THROW_MSG(train::history_json(fields, {{1}}), std::invalid_argument, "history entry of 1 values for 2 fields");
}

}  // namespace
}  // namespace cppgrad
