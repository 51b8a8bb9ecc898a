#include "engine/data/CharVocab.h"

#include "DataTestUtil.h"

#include <gtest/gtest.h>

namespace ps::data {
namespace {

using test::expectDataError;

TEST(CharVocab, EmptyVocabHasOnlyUnknown) {
  const CharVocab v;
  EXPECT_EQ(v.size(), 1);
  EXPECT_EQ(v.encode("ab"), (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(v.serialize(), "charvocab1:");
}

TEST(CharVocab, BuildsSortedDeterministicIds) {
  const CharVocab v = CharVocab::build(std::vector<std::string>{"cab", "b a"});
  EXPECT_EQ(v.size(), 5);  // unknown, ' ', a, b, c
  EXPECT_EQ(v.bytes(), (std::vector<uint8_t>{' ', 'a', 'b', 'c'}));
  EXPECT_EQ(v.id(' '), 1);
  EXPECT_EQ(v.id('a'), 2);
  EXPECT_EQ(v.id('c'), 4);
  EXPECT_TRUE(v.contains('b'));
  EXPECT_FALSE(v.contains('z'));
  // Order of the texts does not matter.
  EXPECT_EQ(v, CharVocab::build(std::vector<std::string>{"b a", "cab"}));
  EXPECT_EQ(v, CharVocab::build("abc "));
}

TEST(CharVocab, EncodeDecodeRoundTrip) {
  const std::string text = "The Fulton County Grand Jury said Friday.\nIt's 1-1/2 miles!";
  const CharVocab v = CharVocab::build(text);
  const auto ids = v.encode(text);
  ASSERT_EQ(ids.size(), text.size());
  for (int32_t id : ids) {
    EXPECT_GT(id, 0);
    EXPECT_LT(id, v.size());
  }
  EXPECT_EQ(v.decode(ids), text);
}

TEST(CharVocab, UnknownBytesMapToZero) {
  const CharVocab v = CharVocab::build("ab");
  EXPECT_EQ(v.encode("axb"), (std::vector<int32_t>{1, 0, 2}));
  EXPECT_EQ(v.decode({1, 0, 2}), "a?b");
}

TEST(CharVocab, DecodeRejectsOutOfRangeIds) {
  const CharVocab v = CharVocab::build("ab");
  expectDataError([&] { v.decode({1, 3}); }, {"3", "0..2"});
  expectDataError([&] { v.decode({-1}); }, {"-1"});
}

TEST(CharVocab, AllBytesRoundTrip) {
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  const CharVocab v = CharVocab::build(all);
  EXPECT_EQ(v.size(), 257);
  EXPECT_EQ(v.decode(v.encode(all)), all);
  const CharVocab back = CharVocab::deserialize(v.serialize());
  EXPECT_EQ(back, v);
  EXPECT_EQ(back.encode(all), v.encode(all));
}

TEST(CharVocab, SerializeRoundTrip) {
  const CharVocab v = CharVocab::build(std::vector<std::string>{"hello\n", "W\xc3\xb6rld"});
  const std::string s = v.serialize();
  EXPECT_EQ(s, "charvocab1:0a576465686c6f72b6c3");
  for (char c : s) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "serialised form must be printable ASCII";
  const CharVocab back = CharVocab::deserialize(s);
  EXPECT_EQ(back, v);
  EXPECT_EQ(back.encode("hello"), v.encode("hello"));
  EXPECT_EQ(CharVocab::deserialize("charvocab1:0A57"), CharVocab::build("\nW"));  // upper-case hex accepted
}

TEST(CharVocab, DeserializeRejectsMalformedInput) {
  expectDataError([] { CharVocab::deserialize(""); }, {"charvocab1:"});
  expectDataError([] { CharVocab::deserialize("vocab:0a"); }, {"does not start"});
  expectDataError([] { CharVocab::deserialize("charvocab1:0a5"); }, {"odd number"});
  expectDataError([] { CharVocab::deserialize("charvocab1:0azz"); }, {"invalid hex digit"});
  expectDataError([] { CharVocab::deserialize("charvocab1:5757"); }, {"ascending"});
  expectDataError([] { CharVocab::deserialize("charvocab1:570a"); }, {"ascending"});
}

}  // namespace
}  // namespace ps::data
