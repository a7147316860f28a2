#include "comm/collectives.h"

#include <fmt/format.h>

namespace rotor::comm {
namespace {

void read_all(const std::vector<std::vector<std::byte>>& messages, std::string_view what, int rank,
              const MessageReader& read) {
    for (std::size_t q = 0; q < messages.size(); ++q) {
        const int from = static_cast<int>(q);
        WireReader reader(messages[q], message_of_rank(what, from), rank);
        read(from, reader);
        reader.finish();
    }
}

}  // namespace

std::string message_of_rank(std::string_view what, int rank) {
    return fmt::format("{} of rank {}", what, rank);
}

void gather_messages(Communicator& comm, std::span<const std::byte> mine, int root,
                     std::string_view what, const MessageReader& read) {
    const auto all = comm.gather(mine, root);
    if (comm.rank() == root) read_all(all, what, comm.rank(), read);
}

void allgather_messages(Communicator& comm, std::span<const std::byte> mine, std::string_view what,
                        const MessageReader& read) {
    read_all(comm.allgather(mine), what, comm.rank(), read);
}

}  // namespace rotor::comm
