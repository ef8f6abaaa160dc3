// The training layer's plots: SVG documents that are well formed enough to open (one polyline per curve, escaped
// text, a "no data" page for empty input), the terminal heatmap's shape and shades, the sparkline blocks, and the
// progress bar's silence off a terminal.

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "test_util.h"
#include "train/plot/attention_maps.h"
#include "train/plot/charts.h"
#include "train/plot/progress_bar.h"
#include "train/plot/terminal.h"

namespace cppgrad::train {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + what.size())) ++n;
  return n;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Starts with "<svg", ends with "</svg>" (and an optional newline), and every '<' opens a tag: no raw
// text-level '<' or '&' slipped through unescaped.
void expect_svg_document(const std::string& svg) {
  EXPECT_EQ(svg.rfind("<svg", 0), 0u) << svg.substr(0, 80);
  const std::string tail = svg.substr(svg.size() >= 8 ? svg.size() - 8 : 0);
  EXPECT_TRUE(tail.ends_with("</svg>\n") || tail.ends_with("</svg>")) << tail;
  EXPECT_EQ(count(svg, "<svg"), 1u);
  EXPECT_EQ(count(svg, "<text"), count(svg, "</text>"));
  EXPECT_EQ(count(svg, "<g"), count(svg, "</g>") + count(svg, "<g/>"));
  for (std::size_t i = 0; i < svg.size(); ++i) {
    if (svg[i] == '<') {
      ASSERT_LT(i + 1, svg.size());
      const char c = svg[i + 1];
      EXPECT_TRUE(std::isalpha(static_cast<unsigned char>(c)) || c == '/') << "raw '<' at " << i;
    } else if (svg[i] == '&') {
      const std::size_t semi = svg.find(';', i);
      ASSERT_NE(semi, std::string::npos);
      const std::string entity = svg.substr(i, semi - i + 1);
      EXPECT_TRUE(entity == "&amp;" || entity == "&lt;" || entity == "&gt;" || entity == "&quot;" || entity == "&apos;")
          << "raw '&' at " << i << ": " << entity;
    }
  }
}

// A run's epochs, losses and three accuracies, as a training program plots them.
struct History {
  std::vector<std::int64_t> epochs;
  std::vector<double> loss;
  std::vector<Curve> accuracies = {{"train token acc", {}}, {"test seq acc", {}}, {"test token acc", {}}};
};

History run_of(int epochs) {
  History run;
  for (int e = 1; e <= epochs; ++e) {
    const double t = e / static_cast<double>(epochs);
    run.epochs.push_back(e);
    run.loss.push_back(2.5 * std::exp(-4.0 * t));
    run.accuracies[0].values.push_back(0.3 + 0.7 * t);
    run.accuracies[1].values.push_back(t * t);
    run.accuracies[2].values.push_back(0.2 + 0.8 * t);
  }
  return run;
}

std::string training_curves_svg(const History& run, const std::string& title) {
  return train::training_curves_svg(run.epochs, run.loss, run.accuracies, title);
}

// ---------------------------------------------------------------- training curves

TEST(Report, TrainingCurvesHaveOnePolylinePerCurveAndAnEscapedTitle) {
  const std::string svg = training_curves_svg(run_of(30), "reverse <len 8> & \"friends\"");
  expect_svg_document(svg);
  EXPECT_EQ(count(svg, "<polyline"), 4u);  // loss + three accuracies
  EXPECT_THAT(svg, HasSubstr("reverse &lt;len 8&gt; &amp; &quot;friends&quot;"));
  EXPECT_THAT(svg, Not(HasSubstr("<len 8>")));
  EXPECT_THAT(svg, HasSubstr("epoch"));
  EXPECT_THAT(svg, HasSubstr("train token acc"));
  EXPECT_THAT(svg, HasSubstr("test seq acc"));
  EXPECT_THAT(svg, HasSubstr("test token acc"));
}

TEST(Report, TrainingCurvesUseALogScaleOnlyWhenTheLossSpansADecade) {
  History run = run_of(10);  // loss 2.5 e^{-4t}: from 1.68 to 0.046, more than a decade
  EXPECT_THAT(training_curves_svg(run, "t"), HasSubstr("log scale"));
  for (std::size_t i = 0; i < run.loss.size(); ++i) run.loss[i] = 1.0 + 0.1 * static_cast<double>(run.epochs[i]);
  EXPECT_THAT(training_curves_svg(run, "t"), Not(HasSubstr("log scale")));
}

TEST(Report, TrainingCurvesOfNoEpochsSayNoData) {
  const std::string svg = training_curves_svg(History{}, "<&>");
  expect_svg_document(svg);
  EXPECT_THAT(svg, HasSubstr("no data"));
  EXPECT_THAT(svg, HasSubstr("&lt;&amp;&gt;"));
  EXPECT_EQ(count(svg, "<polyline"), 0u);
}

TEST(Report, TrainingCurvesOfOneEpochDrawDots) {
  const std::string svg = training_curves_svg(run_of(1), "one");
  expect_svg_document(svg);
  EXPECT_EQ(count(svg, "<polyline"), 4u);
  EXPECT_EQ(count(svg, "<circle"), 4u);
  EXPECT_THAT(svg, Not(HasSubstr("nan")));
  EXPECT_THAT(svg, Not(HasSubstr("inf")));
}

TEST(Report, TrainingCurvesSurviveANonFiniteLoss) {
  History run = run_of(5);
  run.loss[2] = std::nan("");
  run.loss[3] = std::numeric_limits<double>::infinity();
  const std::string svg = training_curves_svg(run, "diverged");
  expect_svg_document(svg);
  EXPECT_EQ(count(svg, "<polyline"), 4u);
  EXPECT_THAT(svg, Not(HasSubstr("points=\"nan")));
}

// ---------------------------------------------------------------- loss curves

TEST(Report, LossCurvesHaveOnePolylinePerCurveAndALegend) {
  std::vector<Curve> curves;
  for (int c = 0; c < 3; ++c) {
    Curve curve{fmt::format("lr=1e-{} <d{}>", c + 2, c), {}};
    for (int e = 1; e <= 12; ++e) curve.values.push_back(3.0 / (e * (c + 1)));
    curves.push_back(curve);
  }
  const std::string svg = loss_curves_svg(curves, "sweep <&>");
  expect_svg_document(svg);
  EXPECT_EQ(count(svg, "<polyline"), 3u);
  EXPECT_THAT(svg, HasSubstr("sweep &lt;&amp;&gt;"));
  EXPECT_THAT(svg, HasSubstr("lr=1e-2 &lt;d0&gt;"));
  EXPECT_THAT(svg, HasSubstr("lr=1e-4 &lt;d2&gt;"));
}

TEST(Report, LossCurvesOfNothingSayNoData) {
  EXPECT_THAT(loss_curves_svg({}, "empty"), HasSubstr("no data"));
  const std::string svg = loss_curves_svg({{"a", {}}, {"b", {}}}, "empty curves");
  expect_svg_document(svg);
  EXPECT_THAT(svg, HasSubstr("no data"));
}

TEST(Report, LossCurvesOfOnePointEach) {
  const std::string svg = loss_curves_svg({{"a", {0.5}}, {"b", {0.7}}}, "one epoch");
  expect_svg_document(svg);
  EXPECT_EQ(count(svg, "<polyline"), 2u);
  EXPECT_THAT(svg, Not(HasSubstr("nan")));
}

// ---------------------------------------------------------------- attention maps

TEST(Report, AttentionMapsHaveOneCellPerWeightWithItsValue) {
  std::vector<AttentionPanel> panels;
  for (int h = 0; h < 5; ++h) {
    AttentionPanel p{fmt::format("decoder.0.cross_attn head {}", h), {}};
    for (int i = 0; i < 3; ++i) {
      p.weights.emplace_back(4, 0.0);
      p.weights.back()[(i + h) % 4] = 1.0;
    }
    panels.push_back(p);
  }
  const std::string svg = attention_maps_svg(panels, {"<a", "b&", "c"}, {"w", "x", "y", "z"}, "maps <&>");
  expect_svg_document(svg);
  EXPECT_EQ(count(svg, "<title>"), 5u * 3u * 4u);  // one hover value per cell
  EXPECT_THAT(svg, HasSubstr("maps &lt;&amp;&gt;"));
  EXPECT_THAT(svg, HasSubstr("&lt;a"));
  EXPECT_THAT(svg, HasSubstr("b&amp;"));
  EXPECT_THAT(svg, HasSubstr("decoder.0.cross_attn head 4"));
  EXPECT_THAT(svg, HasSubstr("fill=\"#ffffff\""));  // weight 0 is white
  EXPECT_THAT(svg, HasSubstr("fill=\"#08306b\""));  // weight 1 is dark blue
  EXPECT_THAT(svg, HasSubstr("1.000"));
}

TEST(Report, AttentionMapsOfNothingSayNoData) {
  expect_svg_document(attention_maps_svg({}, {}, {}, "none"));
  EXPECT_THAT(attention_maps_svg({}, {}, {}, "none"), HasSubstr("no data"));
  EXPECT_THAT(attention_maps_svg({{"empty", {}}}, {}, {}, "none"), HasSubstr("no data"));
}

TEST(Report, AttentionMapsLabelMissingTokensByIndex) {
  const std::string svg = attention_maps_svg({{"p", {{0.25, 0.75}}}}, {}, {}, "");
  expect_svg_document(svg);
  EXPECT_EQ(count(svg, "<title>"), 2u);
  EXPECT_THAT(svg, HasSubstr("0.750"));
}

// ---------------------------------------------------------------- terminal heatmap

TEST(Report, TerminalHeatmapHasAHeaderAndOneLinePerRow) {
  const std::vector<std::vector<double>> w = {{0.0, 1.0, 0.5}, {0.25, 0.0, 0.75}};
  const std::string text = terminal_heatmap(w, {"a", "long"}, {"x", "y", "z"}, false);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  const auto lines = lines_of(text);
  ASSERT_EQ(lines.size(), 3u);  // header + 2 rows
  // Labels right-aligned to the longest one, then a space and two characters per cell.
  EXPECT_EQ(lines[0], "     x y z");
  EXPECT_EQ(lines[1], "   a   @@++");  // 0 -> ' ', 1 -> '@', 0.5 -> '+'
  EXPECT_EQ(lines[2], "long ::  ##");  // 0.25 -> ':', 0.75 -> '#'
}

TEST(Report, TerminalHeatmapNeverCutsALabel) {
  // The GPT's boundary token "<b>" among one-character tokens: every cell widens to 3 characters and a space.
  const std::vector<std::string> labels = {"<b>", "a", "\\n"};
  const auto lines = lines_of(terminal_heatmap({{1.0, 0.0, 0.0}, {0.5, 0.5, 0.0}, {0.0, 0.25, 0.75}}, labels, labels, false));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "    <b> a   \\n");
  EXPECT_EQ(lines[1], "<b> @@@@        ");  // a causal map: zeros above the diagonal
  EXPECT_EQ(lines[2], "  a ++++++++    ");
  EXPECT_EQ(lines[3], " \\n     ::::####");
  // Labels made of indices (none given) get the same room: 10 has its two digits and a space before the next.
  const auto wide = lines_of(terminal_heatmap({std::vector<double>(11, 1.0)}, {"q"}, {}, false));
  ASSERT_EQ(wide.size(), 2u);
  EXPECT_EQ(wide[0], "  0  1  2  3  4  5  6  7  8  9  10");
  EXPECT_EQ(wide[1], "q " + std::string(33, '@'));
}

TEST(Report, TerminalHeatmapShadesClampToTheRange) {
  const std::string text = terminal_heatmap({{-3.0, 0.0, 0.05, 0.95, 1.0, 7.0}}, {"q"}, {}, false);
  const auto lines = lines_of(text);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "q       @@@@@@");
}

TEST(Report, TerminalHeatmapColourResetsEveryLine) {
  const std::string text = terminal_heatmap({{0.0, 1.0}, {1.0, 0.0}}, {"a", "b"}, {"x", "y"}, true);
  const auto lines = lines_of(text);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(text.back(), '\n');
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_THAT(lines[i], HasSubstr("\x1b[48;5;"));
    EXPECT_TRUE(lines[i].ends_with("\x1b[0m")) << i;
    EXPECT_THAT(lines[i], HasSubstr("@@"));
  }
  EXPECT_THAT(lines[0], Not(HasSubstr("\x1b[")));
}

TEST(Report, TerminalHeatmapOfNoRowsIsJustTheHeader) {
  const auto lines = lines_of(terminal_heatmap({}, {}, {"x"}, false));
  EXPECT_EQ(lines.size(), 1u);
}

// ---------------------------------------------------------------- sparkline

TEST(Report, SparklineMapsTheRangeOntoTheEightBlocks) {
  EXPECT_EQ(sparkline({0, 1, 2, 3, 4, 5, 6, 7}), "▁▂▃▄▅▆▇█");
  EXPECT_EQ(sparkline({7, 0}), "█▁");
  EXPECT_EQ(sparkline({}), "");
  EXPECT_EQ(sparkline({2.5, 2.5, 2.5}), "▄▄▄");
}

TEST(Report, DownsampleAveragesEqualRunsAndKeepsShortInput) {
  EXPECT_EQ(downsample({1, 2, 3}, 5), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(downsample({1, 3, 5, 7}, 2), (std::vector<double>{2, 6}));
  EXPECT_EQ(downsample({1, 2, 3, 4, 5, 6}, 3), (std::vector<double>{1.5, 3.5, 5.5}));
  const std::vector<double> long_run(1000, 0.25);
  const std::vector<double> twenty = downsample(long_run, 20);
  ASSERT_EQ(twenty.size(), 20u);
  for (const double v : twenty) EXPECT_DOUBLE_EQ(v, 0.25);
  EXPECT_EQ(downsample({}, 4), std::vector<double>{});
}

// ---------------------------------------------------------------- files

// A fresh directory under the system temp dir, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           fmt::format("cppgrad_report_{}_{}", static_cast<long>(::getpid()),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// ---------------------------------------------------------------- progress bar

TEST(Report, ProgressBarPrintsNothingWhenNotATerminal) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(ProgressBar::is_terminal(f));
  {
    ProgressBar bar(f, "epoch  1/3", 10);
    for (int i = 1; i <= 10; ++i) bar.update(i, 0.5, 100.0);
    for (int i = 1; i <= 10; ++i) bar.tick(i, 0.5, 1);
    bar.finish();
  }  // nor when it goes
  EXPECT_EQ(std::ftell(f), 0L);
  std::fclose(f);
  EXPECT_FALSE(ProgressBar::is_terminal(nullptr));
}

TEST(Report, AProgressBarFromItsFirstReportTakesItsTotalThenAndTimesWhatFollows) {
  // A pseudo-terminal, so the bar draws; what it draws is read back from the other end.
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(grantpt(master), 0);
  ASSERT_EQ(unlockpt(master), 0);
  std::FILE* term = std::fopen(ptsname(master), "w");
  ASSERT_NE(term, nullptr);
  ASSERT_TRUE(ProgressBar::is_terminal(term));
  ProgressBarFromFirstReport bar(term, "eval", "chunks/s");
  bar.report(1, 4, 3.25);  // the bar is made here, with 4 as its total; no chunk is timed yet
  bar.finish();
  std::fclose(term);
  std::string seen(512, '\0');
  const ssize_t n = ::read(master, seen.data(), seen.size());
  ::close(master);
  ASSERT_GT(n, 0);
  seen.resize(static_cast<std::size_t>(n));
  EXPECT_NE(seen.find("eval ["), std::string::npos) << seen;
  EXPECT_NE(seen.find("1/4  loss 3.2500  0.0 chunks/s"), std::string::npos) << seen;
}

}  // namespace
}  // namespace cppgrad::train
