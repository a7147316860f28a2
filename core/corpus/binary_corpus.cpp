// Binary corpus: save (atomic) and load (mmap, validated). Layout in binary_format.h.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/corpus/binary_format.h"
#include "core/corpus/corpus.h"
#include "core/io/atomic_file.h"
#include "core/io/binary_sections.h"
#include "core/io/mapped_file.h"

namespace rotor::core {
namespace detail {
namespace {

constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ull;

inline std::uint64_t mix(std::uint64_t h, std::uint64_t w) noexcept {
    h = (h ^ w) * kMul;
    return h ^ (h >> 32);
}

}  // namespace

void Checksum::add(std::span<const std::byte> bytes) noexcept {
    length_ += bytes.size();
    std::size_t i = 0;
    if (tail_size_ > 0) {
        while (tail_size_ < 8 && i < bytes.size()) tail_[tail_size_++] = bytes[i++];
        if (tail_size_ < 8) return;
        std::uint64_t w;
        std::memcpy(&w, tail_, 8);
        h_ = mix(h_, w);
        tail_size_ = 0;
    }
    std::uint64_t h = h_;
    for (; i + 8 <= bytes.size(); i += 8) {
        std::uint64_t w;
        std::memcpy(&w, bytes.data() + i, 8);
        h = mix(h, w);
    }
    h_ = h;
    while (i < bytes.size()) tail_[tail_size_++] = bytes[i++];
}

std::uint64_t Checksum::value() const noexcept {
    std::uint64_t h = h_;
    if (tail_size_ > 0) {
        std::uint64_t w = 0;
        std::memcpy(&w, tail_, tail_size_);
        h = mix(h, w);
    }
    return mix(h, length_);
}

}  // namespace detail

namespace {

using detail::CorpusHeader;

/// Byte offsets of the sections for a given shape; false if they overflow 64 bits.
struct Layout {
    std::uint64_t offsets_at, words_at, labels_at, end;
};

bool compute_layout(std::uint64_t d, std::uint64_t n, Layout& out) {
    constexpr std::uint64_t kMax = UINT64_MAX / 16;
    if (d >= kMax || n >= kMax) return false;
    out.offsets_at = sizeof(CorpusHeader);
    out.words_at = out.offsets_at + 8 * (d + 1);
    const std::uint64_t words_end = out.words_at + 4 * n;
    out.labels_at = (words_end + 7) / 8 * 8;
    out.end = out.labels_at + 8 * d;
    return true;
}

/// Document labels are 1-based input ids: nonzero and unique. Increasing labels (every reader's)
/// are checked in one pass; others through a sorted copy.
void check_labels(std::span<const std::uint64_t> labels, const std::string& name) {
    bool increasing = true;
    for (std::size_t i = 0; i < labels.size(); ++i) {
        if (labels[i] == 0)
            throw InputError(name, "document " + std::to_string(i) +
                                       " has label 0 (labels are "
                                       "1-based input ids)");
        if (i > 0 && labels[i] <= labels[i - 1]) increasing = false;
    }
    if (increasing) return;
    std::vector<std::uint64_t> sorted(labels.begin(), labels.end());
    std::sort(sorted.begin(), sorted.end());
    const auto twin = std::adjacent_find(sorted.begin(), sorted.end());
    if (twin != sorted.end())
        throw InputError(name, "document label " + std::to_string(*twin) + " appears twice");
}

/// Validates `bytes` (8-byte aligned) as a binary corpus and returns a Corpus viewing them,
/// keeping `owner` alive.
Corpus validate_and_view(std::span<const std::byte> bytes, std::shared_ptr<const void> owner,
                         const std::string& name) {
    CorpusHeader h;
    if (bytes.size() < sizeof h) {
        throw InputError(name, "truncated binary corpus: " + std::to_string(bytes.size()) +
                                   " bytes, the header alone is 64");
    }
    std::memcpy(&h, bytes.data(), sizeof h);
    if (std::memcmp(h.magic, detail::kCorpusMagic, 8) != 0) {
        throw InputError(name, "not a rotor binary corpus (bad magic)");
    }
    if (h.version != detail::kCorpusVersion) {
        throw InputError(name, "unsupported binary corpus version " + std::to_string(h.version) +
                                   " (this build reads version " +
                                   std::to_string(detail::kCorpusVersion) + ")");
    }
    if (h.flags != 0) throw InputError(name, "unknown flags " + std::to_string(h.flags));
    if (h.reserved[0] != 0 || h.reserved[1] != 0)
        throw InputError(name, "reserved header bytes are not zero (a newer format, or corrupt)");
    if (h.num_docs > 0xFFFFFFFFull || h.num_words > 0xFFFFFFFFull) {
        throw InputError(name, "D or W does not fit in 32 bits");
    }
    Layout lay{};
    if (!compute_layout(h.num_docs, h.num_tokens, lay)) {
        throw InputError(name, "impossible header: N = " + std::to_string(h.num_tokens));
    }
    const char* section = bytes.size() < lay.words_at    ? "doc offsets"
                          : bytes.size() < lay.labels_at ? "word ids"
                          : bytes.size() < lay.end       ? "doc labels"
                                                         : nullptr;
    if (section != nullptr) {
        throw InputError(name, "truncated binary corpus: " + std::to_string(bytes.size()) +
                                   " bytes, expected " + std::to_string(lay.end) + " (cut in the " +
                                   section + ")");
    }
    if (bytes.size() > lay.end) {
        throw InputError(name, "binary corpus has " + std::to_string(bytes.size() - lay.end) +
                                   " bytes of trailing garbage");
    }
    const auto d = static_cast<std::size_t>(h.num_docs);
    const auto n = static_cast<std::size_t>(h.num_tokens);
    const auto w = static_cast<WordId>(h.num_words);
    const std::span<const TokenIndex> offsets(
        reinterpret_cast<const TokenIndex*>(bytes.data() + lay.offsets_at), d + 1);
    const std::span<const WordId> words(
        reinterpret_cast<const WordId*>(bytes.data() + lay.words_at), n);
    const std::span<const std::uint64_t> labels(
        reinterpret_cast<const std::uint64_t*>(bytes.data() + lay.labels_at), d);

    if (offsets[0] != 0) throw InputError(name, "doc offsets do not start at 0");
    for (std::size_t i = 0; i < d; ++i) {
        if (offsets[i + 1] < offsets[i]) {
            throw InputError(name, "doc offsets not monotone at doc " + std::to_string(i));
        }
    }
    if (offsets[d] != h.num_tokens) {
        throw InputError(name, "last doc offset " + std::to_string(offsets[d]) +
                                   " != N = " + std::to_string(h.num_tokens));
    }
    // Branch-free max first (vectorizes); find the culprit only on failure.
    WordId max_word = 0;
    for (WordId x : words) max_word = std::max(max_word, x);
    if (n > 0 && max_word >= w) {
        const auto it = std::find_if(words.begin(), words.end(), [w](WordId x) { return x >= w; });
        throw InputError(name, "word id " + std::to_string(*it) + " at token " +
                                   std::to_string(it - words.begin()) +
                                   " is >= W = " + std::to_string(w));
    }
    check_labels(labels, name);
    detail::Checksum sum;
    sum.add(bytes.subspan(sizeof h));
    if (sum.value() != h.checksum) throw InputError(name, "checksum mismatch (corrupt file)");
    return Corpus::view(std::move(owner), offsets, words, labels, w);
}

}  // namespace

Corpus load_binary_corpus(const std::string& path) {
    auto mapped = std::make_shared<const MappedFile>(path);
    const auto bytes = mapped->bytes();
    return validate_and_view(bytes, std::move(mapped), path);
}

Corpus parse_binary_corpus(std::span<const std::byte> bytes, const std::string& name) {
    // Copy into 8-byte aligned storage so the sections can be viewed in place.
    auto storage = std::make_shared<std::vector<std::uint64_t>>((bytes.size() + 7) / 8);
    if (!bytes.empty()) std::memcpy(storage->data(), bytes.data(), bytes.size());
    const std::span<const std::byte> aligned(reinterpret_cast<const std::byte*>(storage->data()),
                                             bytes.size());
    return validate_and_view(aligned, std::move(storage), name);
}

void save_binary_corpus(const Corpus& corpus, const std::string& path) {
    const auto offsets = std::as_bytes(corpus.doc_offsets());
    const auto words = std::as_bytes(corpus.word_ids());
    const auto labels = std::as_bytes(corpus.doc_labels());
    const std::byte zeros[8] = {};
    const auto pad = std::span<const std::byte>(zeros, (8 - words.size() % 8) % 8);

    CorpusHeader h{};
    std::memcpy(h.magic, detail::kCorpusMagic, 8);
    h.version = detail::kCorpusVersion;
    h.num_docs = corpus.num_docs();
    h.num_words = corpus.num_words();
    h.num_tokens = corpus.num_tokens();
    detail::Checksum sum;
    for (const auto s : {offsets, words, pad, labels}) sum.add(s);
    h.checksum = sum.value();

    AtomicFile f(path);
    f.write_pod(h);
    for (const auto s : {offsets, words, pad, labels}) f.write(s);
    f.commit();
}

std::string binary_vocab_path(const std::string& corpus_path) { return corpus_path + ".vocab"; }

bool is_binary_corpus(const std::string& path) {
    const std::string prefix = file_prefix(path, sizeof detail::kCorpusMagic);
    return prefix.size() == sizeof detail::kCorpusMagic &&
           std::memcmp(prefix.data(), detail::kCorpusMagic, sizeof detail::kCorpusMagic) == 0;
}

}  // namespace rotor::core
