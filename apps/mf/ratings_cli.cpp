// `rotor ratings build | split | info`: core/mf's readers, binary form and split behind flags.
#include "apps/mf/ratings_cli.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "core/mf/ratings_binary.h"
#include "core/mf/ratings_load.h"

namespace rotor::apps {
namespace {

/// Throws InputError naming `path` unless `id` reads back unchanged as a field of a CSV ratings
/// line (docs/formats.md, "Ratings"): no comma, blank or line break, no leading quote, and no
/// leading '#' for a user id (the line would be a comment).
void check_csv_id(const std::string& id, const std::string& path, const char* what) {
    const bool bad = id.empty() || id.find_first_of(", \t\r\n") != std::string::npos ||
                     id.front() == '"' || (what[0] == 'u' && id.front() == '#');
    if (bad)
        throw InputError(path,
                         fmt::format("{} id \"{}\" cannot be written as a CSV field", what, id));
}

/// Writes `part` as `user,item,rating` lines (a header first) with the ids of `file`.
void write_csv(const std::string& path, const mf::Ratings& part, const mf::RatingsFile& file) {
    core::AtomicFile out(path);
    fmt::memory_buffer buf;
    fmt::format_to(std::back_inserter(buf), "user,item,rating\n");
    for (mf::UserId u = 0; u < part.num_users(); ++u) {
        const auto items = part.items_of(u);
        const auto values = part.values_of_user(u);
        for (std::size_t t = 0; t < items.size(); ++t) {
            fmt::format_to(std::back_inserter(buf), "{},{},{:.9g}\n", file.users.name(u),
                           file.items.name(items[t]), values[t]);
        }
        if (buf.size() >= (std::size_t{1} << 20)) {
            out.write(std::string_view(buf.data(), buf.size()));
            buf.clear();
        }
    }
    out.write(std::string_view(buf.data(), buf.size()));
    out.commit();
}

/// min, median, mean and max of a list of degrees, and how many are 0.
std::string degree_line(std::vector<std::uint64_t> d) {
    if (d.empty()) return "none";
    std::sort(d.begin(), d.end());
    double sum = 0;
    for (const auto x : d) sum += static_cast<double>(x);
    const std::uint64_t zero =
        static_cast<std::uint64_t>(std::upper_bound(d.begin(), d.end(), 0) - d.begin());
    return fmt::format("min {}, median {}, mean {:.2f}, max {}; {} with no rating", d.front(),
                       d[d.size() / 2], sum / static_cast<double>(d.size()), d.back(), zero);
}

}  // namespace

void run_ratings_build(const std::string& input, const std::string& out) {
    const mf::RatingsFile f = mf::load_ratings(input);
    mf::write_ratings_binary(out, f.ratings, f.users, f.items);
}

RatingsSplitSummary run_ratings_split(const RatingsSplitFlags& flags) {
    if (!(flags.test_fraction >= 0 && flags.test_fraction <= 1))
        throw ConfigError("--test-fraction", "must be a number in [0, 1]");
    if (flags.by != "rating" && flags.by != "user")
        throw ConfigError("--by", "must be rating or user");
    if (flags.train_out == flags.test_out)
        throw ConfigError("--test-out", "must differ from --train-out");
    const mf::RatingsFile f = mf::load_ratings(flags.input);
    if (f.users.size() != f.ratings.num_users() || f.items.size() != f.ratings.num_items())
        throw InputError(flags.input, "holds no ids to write (a binary file built without them)");
    // Plain integer ids (the maps' integer form) are always valid CSV fields.
    for (const mf::IdMap* map : {&f.users, &f.items}) {
        if (map->integers()) continue;
        for (const std::string& id : map->names())
            check_csv_id(id, flags.input, map == &f.users ? "user" : "item");
    }
    const mf::RatingsSplit split =
        mf::split_ratings(f.ratings, flags.test_fraction, flags.seed,
                          flags.by == "user" ? mf::SplitBy::kUser : mf::SplitBy::kRating);
    write_csv(flags.train_out, split.train, f);
    write_csv(flags.test_out, split.test, f);
    return {split.train.nnz(), split.test.nnz()};
}

void run_ratings_info(const std::string& input, std::FILE* out) {
    const mf::RatingsFile f = mf::load_ratings(input);
    const mf::Ratings& a = f.ratings;
    float lo = 0, hi = 0;
    if (a.nnz() > 0) {
        const auto [mn, mx] = std::minmax_element(a.user_values().begin(), a.user_values().end());
        lo = *mn;
        hi = *mx;
    }
    std::vector<std::uint64_t> users(a.num_users()), items(a.num_items());
    for (mf::UserId u = 0; u < a.num_users(); ++u) users[u] = a.user_degree(u);
    for (mf::ItemId i = 0; i < a.num_items(); ++i) items[i] = a.item_degree(i);
    const double cells = static_cast<double>(a.num_users()) * static_cast<double>(a.num_items());
    fmt::print(out,
               "users: {}\nitems: {}\nratings: {}\ndensity: {:.6g}\n"
               "rating: min {:.9g}, mean {:.9g}, max {:.9g}\n"
               "user degree: {}\nitem degree: {}\n",
               a.num_users(), a.num_items(), a.nnz(),
               cells > 0 ? static_cast<double>(a.nnz()) / cells : 0.0, lo, a.mean(), hi,
               degree_line(std::move(users)), degree_line(std::move(items)));
}

void add_ratings_commands(CLI::App& app) {
    auto* ratings = app.add_subcommand("ratings", "Build, split and inspect ratings files");
    ratings->require_subcommand(1);

    struct BuildFlags {
        std::string input, out;
    };
    auto build = std::make_shared<BuildFlags>();
    auto* b = ratings->add_subcommand(
        "build", "Read a ratings file (`user item rating` lines) and write its binary form");
    b->add_option("--ratings", build->input, "Ratings: text (plain or gzip) or binary");
    b->add_option("--input", build->input)->group("");  // the old name, kept for scripts
    b->add_option("--out", build->out, "Output binary ratings")->required();
    b->callback([build] {
        if (build->input.empty()) throw ConfigError("--ratings", "is required");
        run_ratings_build(build->input, build->out);
        std::fprintf(stderr, "rotor: ratings build: written to %s\n", build->out.c_str());
    });

    auto split = std::make_shared<RatingsSplitFlags>();
    auto* s = ratings->add_subcommand("split", "Split ratings into train and test files");
    s->add_option("--ratings", split->input, "Ratings: text or binary");
    s->add_option("--input", split->input)->group("");  // the old name, kept for scripts
    s->add_option("--test-fraction", split->test_fraction, "Share of ratings in the test part")
        ->capture_default_str();
    s->add_option("--by", split->by,
                  "rating: each rating alone; user: each user's share, one kept in train")
        ->capture_default_str();
    s->add_option("--seed", split->seed, "Random seed")->capture_default_str();
    s->add_option("--train-out", split->train_out, "Output train CSV")->required();
    s->add_option("--test-out", split->test_out, "Output test CSV")->required();
    s->callback([split] {
        if (split->input.empty()) throw ConfigError("--ratings", "is required");
        const RatingsSplitSummary r = run_ratings_split(*split);
        std::fprintf(stderr, "rotor: ratings split: %llu ratings to %s, %llu to %s\n",
                     static_cast<unsigned long long>(r.train), split->train_out.c_str(),
                     static_cast<unsigned long long>(r.test), split->test_out.c_str());
    });

    auto info = std::make_shared<std::string>();
    auto* i = ratings->add_subcommand("info", "Print a ratings file's sizes and degrees");
    i->add_option("file", *info, "Ratings: text or binary")->required();
    i->callback([info] { run_ratings_info(*info, stdout); });
}

}  // namespace rotor::apps
