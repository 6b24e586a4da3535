// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The Chrome trace writer and reader: exact timestamps, args and track names survive a round trip.
#include "tprimat/profile/chrome_trace.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../support/fifo.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/profile/trace_io.hpp"
#include "tprimat/profile/trace_reader.hpp"

namespace {

namespace profile = tprimat::profile;
using profile::Kind;
using profile::TraceEvent;

std::vector<TraceEvent> sample_events() {
  std::vector<TraceEvent> v(3);
  v[0].kind = Kind::range;
  v[0].category = "user_annotation";
  v[0].name = "ProfilerStep#2";
  v[0].pid = 4242;
  v[0].tid = 4243;
  v[0].start_ns = 1'000'000'123;  // 1000000.123 us
  v[0].end_ns = 1'000'500'000;
  v[0].external_id = 1;
  v[1].kind = Kind::kernel;
  v[1].category = "kernel";
  v[1].name = "void gemm<\"quoted\", 128>(float*)";
  v[1].pid = 0;
  v[1].tid = 7;
  v[1].start_ns = 1'000'010'001;
  v[1].end_ns = 1'000'110'002;
  v[1].grid = {132, 2, 1};
  v[1].block = {384, 1, 1};
  v[1].correlation = 77;
  v[1].external_id = 2;
  v[2].kind = Kind::memcpy;
  v[2].category = "gpu_memcpy";
  v[2].name = "Memcpy HtoD (Pinned -> Device)";
  v[2].pid = 0;
  v[2].tid = 7;
  v[2].start_ns = 1'000'000'999;
  v[2].end_ns = 1'000'001'999;
  v[2].bytes = 65536;
  return v;
}

TEST(ChromeTrace, MicrosecondsKeepEveryNanosecond) {
  EXPECT_EQ(profile::detail::microseconds(0), "0.000");
  EXPECT_EQ(profile::detail::microseconds(1), "0.001");
  EXPECT_EQ(profile::detail::microseconds(1'234'567'890'123), "1234567890.123");
  EXPECT_EQ(profile::detail::microseconds(-1500), "-1.500");
}

TEST(ChromeTrace, WritesCompleteEventsTrackNamesAndMetadata) {
  profile::TrackNames names;
  names.processes[0] = "GPU 0";
  names.threads[{0, 7}] = "stream 7";
  const auto events = sample_events();
  const auto doc = nlohmann::json::parse(
      profile::chrome_trace_json(events, names, {{"model", "tiny"}, {"rank", 0}}));
  EXPECT_EQ(doc["tprimat"]["model"], "tiny");
  const auto& ev = doc["traceEvents"];
  ASSERT_EQ(ev.size(), 5u);  // 2 metadata rows + 3 events
  EXPECT_EQ(ev[0]["ph"], "M");
  EXPECT_EQ(ev[0]["name"], "process_name");
  EXPECT_EQ(ev[0]["args"]["name"], "GPU 0");
  EXPECT_EQ(ev[1]["name"], "thread_name");
  EXPECT_EQ(ev[1]["tid"], 7);
  const auto& k = ev[3];
  EXPECT_EQ(k["ph"], "X");
  EXPECT_EQ(k["cat"], "kernel");
  EXPECT_EQ(k["name"], "void gemm<\"quoted\", 128>(float*)");
  EXPECT_DOUBLE_EQ(k["ts"].get<double>(), 1000010.001);
  EXPECT_DOUBLE_EQ(k["dur"].get<double>(), 100.001);
  EXPECT_EQ(k["args"]["grid"], nlohmann::json({132, 2, 1}));
  EXPECT_EQ(k["args"]["correlation"], 77);
  EXPECT_EQ(k["args"]["External id"], 2);
  EXPECT_EQ(k["args"]["stream"], 7);
  EXPECT_EQ(ev[4]["args"]["bytes"], 65536);
}

TEST(ChromeTrace, RoundTripsThroughTheReader) {
  profile::TrackNames names;
  names.processes[4242] = "tprimat rank 0";
  names.threads[{4242, 4243}] = "step thread";
  const auto events = sample_events();
  const auto t = profile::parse_chrome_trace(
      nlohmann::json::parse(profile::chrome_trace_json(events, names, {{"rank", 0}})));
  EXPECT_EQ(t.format, "tprimat");
  EXPECT_EQ(t.metadata["rank"], 0);
  EXPECT_EQ(t.names.processes.at(4242), "tprimat rank 0");
  EXPECT_EQ(t.names.threads.at({4242, 4243}), "step thread");
  ASSERT_EQ(t.events.size(), events.size());
  for (std::size_t i = 0; i < events.size(); ++i) {
    SCOPED_TRACE(events[i].name);
    const auto& a = events[i];
    const auto& b = t.events[i];
    EXPECT_EQ(b.kind, a.kind);
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.category, a.category);
    EXPECT_EQ(b.pid, a.pid);
    EXPECT_EQ(b.tid, a.tid);
    EXPECT_EQ(b.start_ns, a.start_ns);
    EXPECT_EQ(b.end_ns, a.end_ns);
    EXPECT_EQ(b.grid, a.grid);
    EXPECT_EQ(b.block, a.block);
    EXPECT_EQ(b.correlation, a.correlation);
    EXPECT_EQ(b.external_id, a.external_id);
    EXPECT_EQ(b.bytes, a.bytes);
  }
}

TEST(ChromeTrace, ReaderTakesArraysAndBeginEndPairs) {
  const auto t = profile::parse_chrome_trace(nlohmann::json::parse(R"([
    {"ph": "B", "name": "outer", "pid": "host", "tid": 1, "ts": 10},
    {"ph": "B", "name": "inner", "pid": "host", "tid": 1, "ts": 12.5},
    {"ph": "E", "pid": "host", "tid": 1, "ts": 13},
    {"ph": "E", "pid": "host", "tid": 1, "ts": 20},
    {"ph": "i", "name": "instant", "pid": 1, "tid": 1, "ts": 11},
    {"ph": "X", "cat": "Kernel", "name": "k", "pid": 0, "tid": 7, "ts": 11, "dur": 2}])"));
  EXPECT_EQ(t.format, "chrome");
  ASSERT_EQ(t.events.size(), 3u);
  EXPECT_EQ(t.events[0].name, "outer");
  EXPECT_EQ(t.events[0].duration_ns(), 10'000);
  EXPECT_EQ(t.events[1].start_ns, 12'500);
  EXPECT_EQ(t.events[1].duration_ns(), 500);
  EXPECT_EQ(t.events[0].pid, t.events[1].pid);  // string pids map to one id
  EXPECT_EQ(t.events[2].kind, Kind::kernel);    // older Kineto's capitalised category
}

TEST(ChromeTrace, NotATraceIsBadInput) {
  EXPECT_THROW(profile::parse_chrome_trace(nlohmann::json::parse(R"({"raw_step_times": []})")),
               tprimat::core::InputError);
  EXPECT_THROW(profile::parse_chrome_trace(nlohmann::json(3)), tprimat::core::InputError);
  EXPECT_THROW(profile::read_chrome_trace("/nonexistent/trace.json"), tprimat::core::InputError);
}

TEST(ChromeTrace, FilesRoundTripPlainAndGzip) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tprimat_trace_io_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto events = sample_events();
  const std::string text = profile::chrome_trace_json(events, {}, {{"rank", 1}});
  profile::write_trace_text(dir / "t.json", text, false);
  EXPECT_EQ(profile::read_trace_text(dir / "t.json"), text);
  EXPECT_EQ(profile::read_chrome_trace(dir / "t.json").events.size(), events.size());
  if (profile::gzip_available) {
    profile::write_trace_text(dir / "t.json.gz", text, true);
    EXPECT_LT(std::filesystem::file_size(dir / "t.json.gz"), text.size());
    EXPECT_EQ(profile::read_trace_text(dir / "t.json.gz"), text);
  } else {
    EXPECT_THROW(profile::write_trace_text(dir / "t.json.gz", text, true), tprimat::core::RunError);
  }
  // No temporary file is left behind.
  int files = 0;
  for ([[maybe_unused]] const auto& f : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, profile::gzip_available ? 2 : 1);
  std::filesystem::remove_all(dir);
}

/// The bytes of `text` as write_trace_text gzips them (zlib builds).
std::string gzipped(const std::filesystem::path& dir, const std::string& text) {
  profile::write_trace_text(dir / "g.json.gz", text, true);
  std::ifstream f(dir / "g.json.gz", std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST(ChromeTrace, GzipInflatesWithinItsCap) {
  if (!profile::gzip_available) GTEST_SKIP() << "built without zlib";
  const auto dir =
      std::filesystem::temp_directory_path() / ("tprimat_trace_gz_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string a = "{\"traceEvents\": [", b = "]}";
  const std::string ga = gzipped(dir, a), gb = gzipped(dir, b);
  // Members follow one another, as gunzip reads them; bytes after the last are ignored.
  EXPECT_EQ(profile::gunzip(ga + gb, "t.json.gz", 1 << 20), a + b);
  EXPECT_EQ(profile::gunzip(ga + "trailing", "t.json.gz", 1 << 20), a);
  // Inflating exactly to the cap is fine; one byte past it is refused, as is a small file that
  // inflates to 64 MiB (a gzip bomb) under a 1 MiB cap: without holding more than the cap.
  EXPECT_EQ(profile::gunzip(ga, "t.json.gz", a.size()), a);
  const std::string bomb = gzipped(dir, std::string(64u << 20, ' '));
  EXPECT_LT(bomb.size(), 100'000u);
  try {
    profile::gunzip(bomb, "t.json.gz", 1 << 20);
    FAIL() << "a gzip bomb inflated";
  } catch (const tprimat::core::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "tprimat: trace t.json.gz (" + std::to_string(bomb.size()) +
                  " bytes of gzip) inflates past the 1 MiB tprimat reads from a trace; pass the "
                  "trace itself, or check what wrote this file: no real trace is that large");
  }
  EXPECT_THROW(profile::gunzip(ga, "t.json.gz", a.size() - 1), tprimat::core::InputError);
  // Truncated or damaged: named as such.
  for (const std::string& damaged : {ga.substr(0, ga.size() - 5), ga.substr(0, 12),
                                     std::string(ga).replace(12, 4, "\xff\xff\xff\xff")}) {
    try {
      profile::gunzip(damaged, "t.json.gz", 1 << 20);
      FAIL() << "damaged gzip inflated";
    } catch (const tprimat::core::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("t.json.gz is a damaged gzip file"), std::string::npos)
          << e.what();
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(ChromeTrace, DeepArgsOrAPathThatIsNotAFileAreBadInput) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tprimat_trace_bad_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "d.json");
  const auto error = [](const std::filesystem::path& p) -> std::string {
    try {
      profile::read_chrome_trace(p);
    } catch (const tprimat::core::InputError& e) {
      return e.what();
    }
    return "read";
  };
  // 100,000 levels in one event's args segfaulted (nlohmann's recursive copy of them).
  std::string deep = R"({"traceEvents": [{"ph": "X", "name": "k", "ts": 0, "dur": 1, "args": )";
  for (int i = 0; i < 100'000; ++i) deep += R"({"a": )";
  deep += "1" + std::string(100'000, '}') + "}]}";
  profile::write_trace_text(dir / "deep.json", deep, false);
  EXPECT_NE(error(dir / "deep.json").find("deep.json: nests arrays and objects deeper than the 64"),
            std::string::npos);
  EXPECT_NE(error(dir / "d.json").find("d.json: is a directory, not a trace; pass a Chrome trace"),
            std::string::npos);
  EXPECT_NE(error("/dev/zero").find("/dev/zero: is a character device, not a trace"),
            std::string::npos);
  const auto fifo = dir / "fifo.json";
  tprimat::testing::make_fifo(fifo);
  EXPECT_NE(tprimat::testing::error_reading_fifo(fifo, [&] { profile::read_chrome_trace(fifo); })
                .find("fifo.json: is a FIFO (named pipe), not a trace"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
