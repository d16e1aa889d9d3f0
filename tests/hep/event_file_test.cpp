// SPDX-License-Identifier: Apache-2.0
// The event-file parser (examples/hep/core/event_file.hpp): FastJet's examples' format, and every
// kind of bad input named with its file and line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/event_file.hpp"

namespace {

class EventFile : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    const std::filesystem::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::string error_of(const std::string& path) {
    try {
      (void)hep::read_event_file(path);
    } catch (const hep::input_error& e) {
      return e.what();
    }
    ADD_FAILURE() << path << ": no error";
    return {};
  }
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("hep_event_file_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(EventFile, ReadsEventsSubEventsCommentsAndPdgIds) {
  const std::string path = write("good.dat",
                                 "# a comment\n"
                                 "  1.5 -2 3e1 40\n"
                                 "\n"
                                 "0 0 1 1 22\n"
                                 "#END\n"
                                 "#SUBSTART\n"
                                 "1 1 1 2 211\n"
                                 "#SUBSTART\n"
                                 "2 2 2 4 -211\n"
                                 "3 3 3 6 2212\n"
                                 "#END\n"
                                 "5 5 5 9\n");  // a last event without #END
  const auto events = hep::read_event_file(path);
  ASSERT_EQ(events.size(), 3u);
  ASSERT_EQ(events[0].interactions.size(), 1u);
  ASSERT_EQ(events[0].interactions[0].size(), 2u);
  EXPECT_EQ(events[0].interactions[0][0].p.px, 1.5);
  EXPECT_EQ(events[0].interactions[0][0].p.pz, 30.0);
  EXPECT_EQ(events[0].interactions[0][0].pdg_id, 0);
  EXPECT_EQ(events[0].interactions[0][1].pdg_id, 22);
  ASSERT_EQ(events[1].interactions.size(), 2u);
  EXPECT_EQ(events[1].interactions[0].size(), 1u);
  EXPECT_EQ(events[1].interactions[1].size(), 2u);
  EXPECT_EQ(events[1].interactions[1][0].pdg_id, -211);
  EXPECT_EQ(events[1].line, 6u);
  ASSERT_EQ(events[2].interactions.size(), 1u);
  EXPECT_EQ(events[2].interactions[0][0].p.e, 9.0);
}

TEST_F(EventFile, AShortLineNamesFileLineAndWhatWasFound) {
  const std::string path = write("short.dat", "1 2 3 4\n1 2 3\n");
  EXPECT_EQ(error_of(path), path + ":2: expected 'px py pz E' or 'px py pz E pdg_id', found 3 fields: '1 2 3'");
  const std::string longer = write("long.dat", "1 2 3 4 5 6 7\n");
  EXPECT_NE(error_of(longer).find(longer + ":1: expected 'px py pz E' or 'px py pz E pdg_id', found 6 or more fields"),
            std::string::npos);
}

TEST_F(EventFile, ANonNumberNamesTheField) {
  const std::string path = write("nan.dat", "1 2 3 4\n#END\n1 2 x3 4\n");
  EXPECT_EQ(error_of(path), path + ":3: field 3 is not a number: 'x3'");
  const std::string pdg = write("pdg.dat", "1 2 3 4 2.5\n");
  EXPECT_EQ(error_of(pdg), pdg + ":1: field 5 (the PDG id) is not an integer: '2.5'");
}

TEST_F(EventFile, AMissingFileSaysWhy) {
  const std::string path = (dir_ / "absent.dat").string();
  EXPECT_EQ(error_of(path), path + ": cannot open: No such file or directory");
}

TEST_F(EventFile, EmptyEventsAndSubEventsAreErrors) {
  const std::string empty = write("empty.dat", "# only comments\n\n");
  EXPECT_EQ(error_of(empty), empty + ": no events (no particle lines)");
  const std::string sub = write("sub.dat", "#SUBSTART\n1 1 1 2\n#SUBSTART\n#SUBSTART\n1 1 1 2\n#END\n");
  EXPECT_EQ(error_of(sub), sub + ":3: sub-event without particles");
  const std::string last = write("last.dat", "#SUBSTART\n1 1 1 2\n#SUBSTART\n#END\n");
  EXPECT_EQ(error_of(last), last + ":3: sub-event without particles");
  const std::string end = write("end.dat", "1 1 1 2\n#END\n#END\n");
  EXPECT_EQ(error_of(end), end + ":3: event without particles (#END with no particle line since the last one)");
}

TEST_F(EventFile, ThePileupLibraryNeedsSubEvents) {
  const std::string hard = write("hard.dat", "1 1 1 2\n#END\n2 2 2 4\n#END\n");
  const std::string pileup = write("pileup.dat", "#SUBSTART\n9 9 9 20\n#SUBSTART\n1 0 0 1\n#SUBSTART\n0 1 0 1\n#END\n");
  const hep::event_library lib = hep::load_event_library({hard, pileup}, {pileup});
  EXPECT_EQ(lib.hard_scatters.size(), 3u);  // a pile-up file's first sub-event is a hard scatter
  EXPECT_EQ(lib.hard_scatters[2][0].p.e, 20.0);
  ASSERT_EQ(lib.minimum_bias.size(), 2u);
  EXPECT_EQ(lib.minimum_bias[1][0].p.py, 1.0);
  EXPECT_EQ(lib.particles(), 5u);
  try {
    (void)hep::load_event_library({hard}, {hard});
    FAIL() << "a pile-up file without sub-events";
  } catch (const hep::input_error& e) {
    EXPECT_EQ(std::string(e.what()),
              hard + ":1: pile-up event without minimum-bias sub-events (expected '#SUBSTART' before "
                     "each interaction, the first being the hard scatter)");
  }
  EXPECT_THROW((void)hep::load_event_library({}, {pileup}), hep::input_error);
  EXPECT_THROW((void)hep::load_event_library({hard}, {}), hep::input_error);
}

// The files the job reads, as Debian's fastjet-examples installs them.
TEST(EventFileDebian, ReadsFastJetsPythiaFiles) {
  const std::string dir = HEP_FASTJET_EXAMPLES;
  if (!std::filesystem::exists(dir + "/Pythia-PtMin1000-LHC-10ev.dat"))
    GTEST_SKIP() << dir << " has no Pythia files: apt-get install fastjet-examples";
  const auto hard = hep::read_event_file(dir + "/Pythia-PtMin1000-LHC-10ev.dat");
  EXPECT_EQ(hard.size(), 10u);
  for (const char* f : {"Pythia-Z2jets-lhc-pileup-1ev.dat", "Pythia-Zp2jets-lhc-pileup-1ev.dat",
                        "Pythia-dijet-ptmin100-lhc-pileup-1ev.dat"}) {
    const auto e = hep::read_event_file(dir + "/" + f);
    ASSERT_EQ(e.size(), 1u) << f;
    EXPECT_EQ(e[0].interactions.size(), 21u) << f;
  }
}

}  // namespace
