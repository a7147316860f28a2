// Filters of the key-value engine (comm/kv.h): small composable objects that shrink the
// messages of a push or a pull (Li et al., OSDI 2014, section 5; docs/logreg.md, "Filters").
// Generic: a filter sees one message as sorted keys with `width` values each and knows nothing
// of the model; a model-specific rule (logistic regression's KKT screening) comes in through
// KvPredicateFilter.
//
// Two phases, each running the stack's filters in the order given:
//   select (lossy, sender): a filter drops entries, a key and all its values together
//     (KvEntries::dropped_by); after every filter has selected, each is told what was sent
//     (sent()). On the receiver, restore() lets a filter fill the entries it dropped (from what
//     it remembers); entries nobody restores reach the server as dropped keys
//     (KvServerHandler::on_push_dropped). A pull answer may only lose entries that are restored.
//   encode (lossless, sender) / decode (receiver, reverse order): rewrites the wire form
//     (KvWire): key caching replaces the keys by a signature, zstd compresses the payload.
// Channels: kPush (worker → server: keys and values), kPullRequest (worker → server: keys) and
// kPullReply (server → worker: values of the request's keys, no keys on the wire).
// Every filter counts the wire bytes of the messages it saw and let through (KvFilterStats): a
// selecting filter the bytes before and after its select() (as if nothing were encoded), an
// encoding filter those before and after its encode().
//
// State: a filter remembers per (channel, peer) what it sent and, separately, what it received.
// Both ends see a pair's messages in the order they were sent (one tag a direction, and the
// communicator keeps the order of a pair's messages), so the two states move in lockstep.
// Thread-safety: a stack belongs to one KvNode and is used on its comm thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "comm/wire.h"

namespace rotor::comm {

/// Which message a filter works on (see the file comment).
enum class KvChannel : std::uint8_t { kPush = 0, kPullRequest = 1, kPullReply = 2 };

/// The message being filtered: who, when, and whether lossy filters may act.
struct KvFilterContext {
    KvChannel channel = KvChannel::kPush;
    int self = 0;           ///< this rank (for errors)
    int peer = 0;           ///< the other end's rank
    std::uint64_t t = 0;    ///< the iteration of the push or pull
    bool lossless = false;  ///< true: select() must keep everything (an exact pull)
    bool float32 = false;   ///< the values travel as float32 (pushes of KvOptions::push_float32)
};

/// The entries of one message. keys strictly increasing; values: width per key, for every key
/// (a dropped entry's values are meaningless until restored); dropped_by: per key, 0 if kept,
/// else 1 + the index in the stack of the filter that dropped it.
struct KvEntries {
    std::vector<std::uint64_t> keys;
    std::vector<double> values;
    std::vector<std::uint8_t> dropped_by;
    std::size_t width = 0;

    std::size_t size() const noexcept { return keys.size(); }
    std::span<const double> values_of(std::size_t i) const {
        return std::span<const double>(values).subspan(i * width, width);
    }
    std::size_t kept() const noexcept;
};

/// The wire form of a message: the keys or their signature, the drop codes if anything was
/// dropped, the kept entries' values, and optionally all of the payload compressed.
struct KvWire {
    std::vector<std::uint64_t> keys;  ///< empty when keys_cached (or on kPullReply)
    bool keys_cached = false;         ///< the receiver has the keys: signature and count only
    std::uint64_t key_signature = 0;
    std::uint64_t key_count = 0;
    bool has_dropped = false;              ///< some entry was dropped: dropped_by is sent
    std::vector<std::uint8_t> dropped_by;  ///< per key (when has_dropped and not packed)
    std::vector<double> values;            ///< kept entries only, width each
    bool float32 = false;                  ///< values written as float32 (each one a float)
    bool zero_bytes = false;            ///< doubles written without their zero bytes (when shorter)
    bool packed = false;                ///< dropped_by and values are in `payload` instead
    std::vector<std::uint8_t> payload;  ///< compressed dropped_by bytes then value bytes
    std::uint64_t payload_raw = 0;      ///< bytes of the uncompressed payload

    /// Bytes this form takes on the wire (as written by write_kv_wire, header excluded).
    std::uint64_t bytes() const noexcept;
};

/// Bytes one filter saw (in) and let through (out), in plain wire bytes, per direction: push
/// counts worker → server messages (pushes and pull requests) a worker sends, pull counts the
/// answers a server sends.
struct KvFilterStats {
    std::string name;
    std::uint64_t push_in = 0;
    std::uint64_t push_out = 0;
    std::uint64_t pull_in = 0;
    std::uint64_t pull_out = 0;
    std::uint64_t entries_dropped = 0;  ///< entries this filter dropped (sender)
};

/// One filter. Every hook has a do-nothing default.
class KvFilter {
  public:
    virtual ~KvFilter() = default;
    /// The name in the stats and on the command line.
    virtual std::string name() const = 0;
    /// May drop kept entries (set dropped_by[i] = self) unless ctx.lossless. `self` is 1 + its
    /// index in the stack.
    virtual void select(const KvFilterContext& ctx, KvEntries& entries, std::uint8_t self);
    /// Instead of select() when ctx.lossless: may drop only entries that restore() refills with
    /// the very bits they have (none by default).
    virtual void select_unchanged(const KvFilterContext& ctx, KvEntries& entries,
                                  std::uint8_t self);
    /// Sender, after every filter selected: the entries that go out (dropped_by final).
    virtual void sent(const KvFilterContext& ctx, const KvEntries& entries);
    /// Receiver: fills entries with dropped_by == self (values and dropped_by = 0) if it can;
    /// then sees the message (to remember it).
    virtual void restore(const KvFilterContext& ctx, KvEntries& entries, std::uint8_t self);
    /// True when restore() refills every entry this filter drops (allowed on pull answers).
    virtual bool restores() const { return false; }
    /// True for an encoding filter (its bytes counted around encode(); else around select()).
    virtual bool encodes() const { return false; }
    /// Lossless rewrite of the wire form (sender) and its inverse (receiver).
    virtual void encode(const KvFilterContext& ctx, KvWire& wire);
    virtual void decode(const KvFilterContext& ctx, KvWire& wire);
};

/// Significantly modified: keeps an entry only when it changed by more than c / (t + 1) since
/// it was last sent to that peer (the threshold decays as O(1/t)); the receiver restores the
/// others from what it last received. The change of an entry is `distance(new, old)`, by
/// default the largest |new_j − old_j|. Entries never sent count as changed from 0.
class KvSigmodFilter final : public KvFilter {
  public:
    using Distance = std::function<double(std::span<const double>, std::span<const double>)>;
    explicit KvSigmodFilter(double c, Distance push_distance = {}, Distance pull_distance = {});
    ~KvSigmodFilter() override;
    std::string name() const override { return "sigmod"; }
    void select(const KvFilterContext& ctx, KvEntries& entries, std::uint8_t self) override;
    /// An exact message drops the entries bitwise equal to what the receiver last received (or
    /// +0.0 never sent): the receiver restores exactly them, so the message stays exact.
    void select_unchanged(const KvFilterContext& ctx, KvEntries& entries,
                          std::uint8_t self) override;
    void sent(const KvFilterContext& ctx, const KvEntries& entries) override;
    void restore(const KvFilterContext& ctx, KvEntries& entries, std::uint8_t self) override;
    bool restores() const override { return true; }

  private:
    struct Memory;
    Memory& memory(bool sender, const KvFilterContext& ctx);
    double c_;
    Distance push_distance_;
    Distance pull_distance_;
    std::vector<std::unique_ptr<Memory>> memories_;
};

/// Random skip: drops each entry of a push with probability `rate`, decided by a hash of
/// (seed, t, key): deterministic, and the same for every worker (so a key is pushed by all or by
/// none). Pull requests and answers pass.
class KvSkipFilter final : public KvFilter {
  public:
    KvSkipFilter(double rate, std::uint64_t seed);
    std::string name() const override { return "skip"; }
    void select(const KvFilterContext& ctx, KvEntries& entries, std::uint8_t self) override;
    /// Whether (t, key) is skipped.
    bool skips(std::uint64_t t, std::uint64_t key) const noexcept;

  private:
    std::uint64_t cut_;  ///< skipped when the hash is below this
    std::uint64_t seed_;
};

/// Drops the push entries a model's rule names (e.g. logistic regression's KKT screening):
/// `drop(t, key, values)` true drops. Pulls pass.
class KvPredicateFilter final : public KvFilter {
  public:
    using Drop = std::function<bool(std::uint64_t t, std::uint64_t key, std::span<const double>)>;
    KvPredicateFilter(std::string name, Drop drop);
    std::string name() const override { return name_; }
    void select(const KvFilterContext& ctx, KvEntries& entries, std::uint8_t self) override;

  private:
    std::string name_;
    Drop drop_;
};

/// Key caching: a key list sent before to the same peer on the same channel travels as its
/// 64-bit signature and count. The sender mirrors the receiver's cache (the same lists in the
/// same order, the same bounded least-recently-used policy), so it knows when the receiver
/// lacks a list (evicted, or never sent) or holds a different list under the same signature,
/// and then sends the keys again; a receiver that does not know a signature throws CommError
/// (never guesses). `capacity` lists per (channel, peer).
class KvKeyCacheFilter final : public KvFilter {
  public:
    using Signature = std::function<std::uint64_t(std::span<const std::uint64_t>)>;
    /// `signature` defaults to key_list_signature (tests inject collisions).
    explicit KvKeyCacheFilter(std::size_t capacity = 1024, Signature signature = {});
    ~KvKeyCacheFilter() override;
    std::string name() const override { return "keycache"; }
    bool encodes() const override { return true; }
    void encode(const KvFilterContext& ctx, KvWire& wire) override;
    void decode(const KvFilterContext& ctx, KvWire& wire) override;
    std::uint64_t hits() const noexcept { return hits_; }
    std::uint64_t misses() const noexcept { return misses_; }

  private:
    struct Cache;
    Cache& cache(bool sender, const KvFilterContext& ctx);
    std::size_t capacity_;
    Signature signature_;
    std::vector<std::unique_ptr<Cache>> caches_;
    std::uint64_t hits_ = 0;
    std::uint64_t misses_ = 0;
};

/// zstd (lossless) on the payload: the drop codes and the values' bytes. One zstd stream per
/// (channel, peer) and direction, never ended: each message is a flushed block of it, so it
/// carries no frame header and refers back to the pair's earlier messages (a worker pulls the
/// same block's keys every pass; their answers look alike); a payload under kMinPacked bytes
/// stays plain and outside the stream. Both ends move in lockstep, as every filter's state does.
/// Throws CommError on a payload that does not decompress to its stated size.
class KvZstdFilter final : public KvFilter {
  public:
    /// The window of a stream: 2^kWindowLog bytes of a pair's history (a pass of answers on the
    /// sets measured), which is about what a stream's state costs on each end.
    static constexpr int kWindowLog = 20;
    /// A payload (drop codes and values) shorter than this many bytes is not compressed: a flushed
    /// block costs its 3-byte header, the stated size and the payload's count, more than a few
    /// dozen bytes of drop codes and mantissas gain.
    static constexpr std::size_t kMinPacked = 64;

    explicit KvZstdFilter(int level = 3);
    ~KvZstdFilter() override;
    std::string name() const override { return "zstd"; }
    bool encodes() const override { return true; }
    void encode(const KvFilterContext& ctx, KvWire& wire) override;
    void decode(const KvFilterContext& ctx, KvWire& wire) override;

  private:
    struct Stream;
    Stream& stream(bool sender, const KvFilterContext& ctx);
    int level_;
    std::vector<std::unique_ptr<Stream>> streams_;
};

/// The 64-bit signature of a key list (FNV-1a over the keys' bytes and the count, then a
/// SplitMix64 finaliser).
std::uint64_t key_list_signature(std::span<const std::uint64_t> keys) noexcept;

/// The filters of one KvNode, in order. Movable, not copyable.
class KvFilterStack {
  public:
    KvFilterStack() = default;
    explicit KvFilterStack(std::vector<std::unique_ptr<KvFilter>> filters);
    KvFilterStack(KvFilterStack&&) noexcept = default;
    KvFilterStack& operator=(KvFilterStack&&) noexcept = default;

    bool empty() const noexcept { return filters_.empty(); }
    /// Sender: selects, then encodes; counts bytes. `entries.dropped_by` may be empty (all kept).
    KvWire send(const KvFilterContext& ctx, KvEntries& entries);
    /// Receiver: decodes and restores. `keys` are the message's keys when the wire carries none
    /// (kPullReply: the request's); `width` values per key. Throws CommError on a bad message,
    /// or on a pull answer with entries no filter restored.
    KvEntries receive(const KvFilterContext& ctx, KvWire wire, std::span<const std::uint64_t> keys,
                      std::size_t width);
    /// Per filter, in order, since the stack was made or clear_stats().
    std::vector<KvFilterStats> stats() const { return stats_; }
    /// Zeroes the counts (the filters' memory stays).
    void clear_stats();

  private:
    std::vector<std::unique_ptr<KvFilter>> filters_;
    std::vector<KvFilterStats> stats_;
};

/// Writes `wire` after the message header (comm/wire.h), and reads it back (throws CommError,
/// naming the reader's message, on a malformed one).
void write_kv_wire(WireWriter& w, const KvWire& wire);
KvWire read_kv_wire(WireReader& r);

}  // namespace rotor::comm
