// Typed collectives over a Communicator: gather, allgather and broadcast of anything the wire
// format encodes (comm/wire.h: scalars, strings, vectors, and user structs with
// wire_encode / wire_decode), so a model never hand-parses the byte vectors of
// Communicator::gather and friends. Every received message is decoded whole (a reader named
// "<what> of rank q", finish() refusing trailing bytes): a malformed message throws CommError
// naming the message and the rank that reads it.
//
// Collective rules as for Communicator (comm/communicator.h): every rank calls the same helper
// in the same order with the same root and `what`; not thread-safe (the rank's comm thread).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "comm/communicator.h"
#include "comm/wire.h"

namespace rotor::comm {

/// Reads rank `rank`'s message from `reader`; the helper calls reader.finish() afterwards.
using MessageReader = std::function<void(int rank, WireReader& reader)>;

/// The name of rank q's message in errors: "<what> of rank <q>".
std::string message_of_rank(std::string_view what, int rank);

/// Collective: rank q's `mine` (a message built with WireWriter) reaches `root`, where
/// read(q, reader) is called for q = 0..P-1 in rank order and each message must be read whole.
/// Other ranks do not call read.
void gather_messages(Communicator& comm, std::span<const std::byte> mine, int root,
                     std::string_view what, const MessageReader& read);

/// Collective: every rank receives every rank's message and calls read(q, reader) for
/// q = 0..P-1 in rank order; each message must be read whole.
void allgather_messages(Communicator& comm, std::span<const std::byte> mine, std::string_view what,
                        const MessageReader& read);

/// Collective: every rank's `mine` on `root` (element q from rank q); empty on other ranks.
template <class T>
std::vector<T> gather(Communicator& comm, const T& mine, int root, std::string_view what) {
    std::vector<T> out;
    gather_messages(comm, encode_message(mine), root, what,
                    [&](int, WireReader& r) { r.get(out.emplace_back()); });
    return out;
}

/// Collective: every rank's `mine` on every rank (element q from rank q).
template <class T>
std::vector<T> allgather(Communicator& comm, const T& mine, std::string_view what) {
    std::vector<T> out;
    allgather_messages(comm, encode_message(mine), what,
                       [&](int, WireReader& r) { r.get(out.emplace_back()); });
    return out;
}

/// Collective: `root`'s `value` replaces `value` on every other rank (root's stays as it is).
/// Errors name the message "<what> from rank <root>".
template <class T>
void broadcast(Communicator& comm, T& value, int root, std::string_view what) {
    std::vector<std::byte> bytes;
    if (comm.rank() == root) bytes = encode_message(value);
    comm.broadcast(bytes, root);
    if (comm.rank() == root) return;
    value = decode_message<T>(bytes, std::string(what) + " from rank " + std::to_string(root),
                              comm.rank());
}

}  // namespace rotor::comm
