// Binary corpus: round trips and corrupt-file tests.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <string>

#include "core/base/error.h"
#include "core/base/rng.h"
#include "core/corpus/binary_format.h"
#include "core/corpus/corpus.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::core {
namespace {

using rotor::testing::read_all;
using rotor::testing::TempDir;

Corpus random_corpus(std::uint64_t seed, DocId docs, WordId words) {
    Rng rng(seed);
    CorpusBuilder b(words);
    for (DocId d = 0; d < docs; ++d) {
        b.begin_doc(3 * d + 1);
        const auto len = rng.below(40);
        for (std::uint64_t i = 0; i < len; ++i) b.add(static_cast<WordId>(rng.below(words)));
    }
    return b.build();
}

/// Writes a valid corpus, lets `mutate` damage its bytes, and expects an InputError naming the
/// file and containing `what`.
template <class Mutate>
void expect_load_error(Mutate mutate, const std::string& what) {
    TempDir dir;
    const std::string good = dir.file("good.bin");
    save_binary_corpus(random_corpus(7, 20, 50), good);
    std::string bytes = read_all(good);
    mutate(bytes);
    const std::string path = dir.write("bad.bin", bytes);
    try {
        load_binary_corpus(path);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(e.path(), path);
        EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
    // The in-memory parser applies the same checks.
    EXPECT_THROW(parse_binary_corpus(std::as_bytes(std::span<const char>(bytes)), "mem"),
                 InputError);
}

/// Rewrites the checksum so that a deliberately invalid body reaches the structural checks.
void fix_checksum(std::string& bytes) {
    detail::Checksum sum;
    sum.add(std::as_bytes(std::span<const char>(bytes)).subspan(64));
    const std::uint64_t v = sum.value();
    std::memcpy(bytes.data() + offsetof(detail::CorpusHeader, checksum), &v, 8);
}

TEST(BinaryCorpus, RoundTripThroughMmap) {
    TempDir dir;
    const Corpus c = random_corpus(1, 200, 97);
    save_binary_corpus(c, dir.file("c.bin"));
    EXPECT_EQ(dir.count(), 1u);  // no temporary left
    const Corpus back = load_binary_corpus(dir.file("c.bin"));
    EXPECT_EQ(back, c);
    EXPECT_EQ(back.num_tokens(), c.num_tokens());
    EXPECT_EQ(back.doc_labels()[5], 16u);
}

TEST(BinaryCorpus, RoundTripOfEmptyAndOddSizedCorpora) {
    TempDir dir;
    for (const Corpus& c : {Corpus(), Corpus::from_docs({{}, {}}, 0), Corpus::from_docs({{2}}, 3),
                            Corpus::from_docs({{0, 1, 2}, {}}, 3)}) {
        save_binary_corpus(c, dir.file("c.bin"));
        EXPECT_EQ(load_binary_corpus(dir.file("c.bin")), c);
    }
}

TEST(BinaryCorpus, UciToBinaryToLoadIsTheSame) {
    TempDir dir;
    const std::string docword = "3\n4\n4\n1 4 2\n1 1 1\n3 2 5\n3 3 1\n";
    const Corpus uci = read_uci(dir.write("docword.txt", docword), "", nullptr);
    save_binary_corpus(uci, dir.file("c.bin"));
    const LoadedCorpus l = load_corpus(dir.file("c.bin"), "");
    EXPECT_EQ(l.format, "binary");
    EXPECT_EQ(l.corpus, uci);
    EXPECT_FALSE(l.vocab.has_value());
}

TEST(BinaryCorpus, LoadCorpusFindsTheVocabularyBeside) {
    TempDir dir;
    save_binary_corpus(Corpus::from_docs({{0, 1}}, 2), dir.file("c.bin"));
    Vocabulary::from_words({"x", "y"}).save(binary_vocab_path(dir.file("c.bin")));
    const LoadedCorpus l = load_corpus(dir.file("c.bin"), "");
    ASSERT_TRUE(l.vocab.has_value());
    EXPECT_EQ(l.vocab->word(1), "y");
    // A vocabulary of the wrong size is an error.
    Vocabulary::from_words({"x", "y", "z"}).save(dir.file("v3.txt"));
    EXPECT_THROW(load_corpus(dir.file("c.bin"), dir.file("v3.txt")), InputError);
}

TEST(BinaryCorpus, WrongMagic) {
    expect_load_error([](std::string& b) { b[3] = 'X'; }, "bad magic");
}
TEST(BinaryCorpus, WrongVersion) {
    expect_load_error([](std::string& b) { b[8] = 9; }, "unsupported binary corpus version 9");
}
TEST(BinaryCorpus, UnknownFlags) {
    expect_load_error([](std::string& b) { b[12] = 1; }, "unknown flags");
}
TEST(BinaryCorpus, TruncatedHeader) {
    expect_load_error([](std::string& b) { b.resize(40); }, "the header alone");
}
TEST(BinaryCorpus, TruncatedInDocOffsets) {
    expect_load_error([](std::string& b) { b.resize(64 + 8 * 5); }, "cut in the doc offsets");
}
TEST(BinaryCorpus, TruncatedInWordIds) {
    expect_load_error([](std::string& b) { b.resize(64 + 8 * 21 + 12); }, "cut in the word ids");
}
TEST(BinaryCorpus, TruncatedInDocLabels) {
    expect_load_error([](std::string& b) { b.resize(b.size() - 8); }, "cut in the doc labels");
}
TEST(BinaryCorpus, TrailingBytes) {
    expect_load_error([](std::string& b) { b += "junk"; }, "trailing garbage");
}
TEST(BinaryCorpus, FlippedByteFailsTheChecksum) {
    expect_load_error([](std::string& b) { b[b.size() - 3] ^= 0x10; }, "checksum mismatch");
}
TEST(BinaryCorpus, OffsetsNotMonotone) {
    expect_load_error(
        [](std::string& b) {
            const std::uint64_t big = 1000000;
            std::memcpy(b.data() + 64 + 8 * 3, &big, 8);
            fix_checksum(b);
        },
        "not monotone at doc 3");
}
TEST(BinaryCorpus, LastOffsetIsNotN) {
    expect_load_error(
        [](std::string& b) {
            std::uint64_t last;
            std::memcpy(&last, b.data() + 64 + 8 * 20, 8);
            ++last;
            std::memcpy(b.data() + 64 + 8 * 20, &last, 8);
            fix_checksum(b);
        },
        "!= N");
}
TEST(BinaryCorpus, WordIdNotBelowW) {
    expect_load_error(
        [](std::string& b) {
            const std::uint32_t w = 50;
            std::memcpy(b.data() + 64 + 8 * 21 + 4 * 2, &w, 4);
            fix_checksum(b);
        },
        "word id 50 at token 2 is >= W = 50");
}
TEST(BinaryCorpus, NonzeroReservedHeaderBytes) {
    expect_load_error([](std::string& b) { b[offsetof(detail::CorpusHeader, reserved) + 9] = 1; },
                      "reserved header bytes are not zero");
}
TEST(BinaryCorpus, ZeroDocumentLabel) {
    // Labels are the file's last 20 u64 (D = 20); doc 4's is made 0.
    expect_load_error(
        [](std::string& b) {
            const std::uint64_t zero = 0;
            std::memcpy(b.data() + b.size() - 8 * (20 - 4), &zero, 8);
            fix_checksum(b);
        },
        "document 4 has label 0");
}
TEST(BinaryCorpus, DuplicatedDocumentLabel) {
    // Doc 7 gets doc 2's label (3 * 2 + 1).
    expect_load_error(
        [](std::string& b) {
            const std::uint64_t seven = 7;
            std::memcpy(b.data() + b.size() - 8 * (20 - 7), &seven, 8);
            fix_checksum(b);
        },
        "document label 7 appears twice");
}
TEST(BinaryCorpus, MissingFile) {
    TempDir dir;
    EXPECT_THROW(load_binary_corpus(dir.file("none.bin")), InputError);
}

}  // namespace
}  // namespace rotor::core
