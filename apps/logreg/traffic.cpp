#include "apps/logreg/traffic.h"

#include <fmt/format.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "comm/collectives.h"

namespace rotor::logreg {

Traffic gather_traffic(comm::Communicator& world, const comm::KvStats& mine, int root) {
    std::vector<std::uint64_t> row = {mine.reply_bytes_sent, mine.request_bytes_sent,
                                      mine.messages_sent,
                                      static_cast<std::uint64_t>(std::llround(mine.wait_s * 1e9))};
    std::vector<std::string> names;
    for (const comm::KvFilterStats& f : mine.filters) {
        names.push_back(f.name);
        row.insert(row.end(), {f.push_in, f.push_out, f.pull_in, f.pull_out, f.entries_dropped});
    }
    const auto rows = comm::gather(world, row, root, "kv traffic");
    Traffic t;
    for (const std::string& n : names) t.filters.push_back({.name = n});
    for (const auto& r : rows) {
        if (r.size() != row.size()) continue;  // every rank has the same stack
        t.server_bytes += r[0];
        t.worker_bytes += r[1];
        t.messages += r[2];
        t.rank_wait_s.push_back(static_cast<double>(r[3]) * 1e-9);
        for (std::size_t f = 0; f < t.filters.size(); ++f) {
            const std::uint64_t* v = r.data() + 4 + 5 * f;
            t.filters[f].push_in += v[0];
            t.filters[f].push_out += v[1];
            t.filters[f].pull_in += v[2];
            t.filters[f].pull_out += v[3];
            t.filters[f].entries_dropped += v[4];
        }
    }
    return t;
}

std::string traffic_line(const Traffic& t) {
    std::string s =
        fmt::format("bytes sent: servers {}, workers {}", t.server_bytes, t.worker_bytes);
    for (const comm::KvFilterStats& f : t.filters) {
        s += fmt::format("; {} push {} -> {}, pull {} -> {}", f.name, f.push_in, f.push_out,
                         f.pull_in, f.pull_out);
    }
    return s;
}

std::string traffic_json(const Traffic& t) {
    nlohmann::json j = {{"server_bytes", t.server_bytes},
                        {"worker_bytes", t.worker_bytes},
                        {"messages", t.messages},
                        {"rank_wait_s", t.rank_wait_s},
                        {"filters", nlohmann::json::array()}};
    for (const comm::KvFilterStats& f : t.filters) {
        j["filters"].push_back({{"name", f.name},
                                {"push_in", f.push_in},
                                {"push_out", f.push_out},
                                {"pull_in", f.pull_in},
                                {"pull_out", f.pull_out},
                                {"entries_dropped", f.entries_dropped}});
    }
    return j.dump() + "\n";
}

}  // namespace rotor::logreg
