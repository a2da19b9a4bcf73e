#include "sandbox/output_capture.hpp"

#include <gtest/gtest.h>

using kbench::sandbox::OutputCapture;

TEST(OutputCapture, KeepsEverythingBelowTheCap) {
  OutputCapture capture(16);
  capture.append("hello ");
  capture.append("world");
  EXPECT_EQ(capture.text(), "hello world");
  EXPECT_FALSE(capture.truncated());
  EXPECT_EQ(capture.total_bytes(), 11u);
}

TEST(OutputCapture, KeepsHeadAndTailAndCountsTheMiddle) {
  OutputCapture capture(4);
  capture.append("AAAA");
  for (int i = 0; i < 1000; ++i) {
    capture.append("xxxxxxxxxx");
  }
  capture.append("ZZZZ");
  EXPECT_TRUE(capture.truncated());
  EXPECT_EQ(capture.total_bytes(), 4u + 10000u + 4u);
  const std::string text = capture.text();
  EXPECT_EQ(text.substr(0, 4), "AAAA");
  EXPECT_EQ(text.substr(text.size() - 4), "ZZZZ");
  EXPECT_NE(text.find("10000 bytes of output left out"), std::string::npos);
}

TEST(OutputCapture, TailReturnsTheLastBytes) {
  OutputCapture capture(8);
  capture.append("0123456789abcdef");
  EXPECT_EQ(capture.tail(3), "def");
  OutputCapture small(64);
  small.append("traceback line\nlast line");
  EXPECT_EQ(small.tail(9), "last line");
}

TEST(OutputCapture, ASingleHugeChunkKeepsItsEnd) {
  OutputCapture capture(4);
  capture.append(std::string(100, 'a') + "TAIL");
  EXPECT_EQ(capture.tail(4), "TAIL");
  EXPECT_EQ(capture.text().substr(0, 4), "aaaa");
}
