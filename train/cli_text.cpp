#include "train/cli_text.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

namespace rotor::train {

std::size_t edit_distance(std::string_view a, std::string_view b) {
    // Optimal string alignment: rows i-2, i-1 and i of the dynamic programme.
    const std::size_t m = b.size();
    std::vector<std::size_t> before(m + 1), prev(m + 1), row(m + 1);
    for (std::size_t j = 0; j <= m; ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        row[0] = i;
        for (std::size_t j = 1; j <= m; ++j) {
            const std::size_t cost = a[i - 1] != b[j - 1] ? 1 : 0;
            row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                row[j] = std::min(row[j], before[j - 2] + 1);
        }
        before.swap(prev);
        prev.swap(row);
    }
    return prev[m];
}

std::string suggest(std::string_view typed, std::span<const std::string> candidates) {
    typed = typed.substr(0, typed.find('='));
    std::string best;
    std::size_t best_d = SIZE_MAX;
    std::string prefix_of;
    std::size_t prefixes = 0;
    for (const std::string& c : candidates) {
        if (c == typed) continue;
        if (c.starts_with(typed) && typed.size() > 3) {
            prefix_of = c;
            ++prefixes;
        }
        const std::size_t d = edit_distance(typed, c);
        if (d < best_d) {
            best_d = d;
            best = c;
        }
    }
    const std::size_t name_len = typed.size() - (typed.starts_with("--") ? 2 : 0);
    if (best_d <= 2 && 3 * best_d <= std::max<std::size_t>(name_len, 3)) return best;
    if (prefixes == 1) return prefix_of;
    return "";
}

std::string typo_hint(const CLI::App& app) {
    const CLI::App* deepest = &app;
    while (!deepest->get_subcommands().empty()) deepest = deepest->get_subcommands().front();
    std::vector<std::string> flags;
    for (const CLI::Option* o : deepest->get_options()) {
        for (const std::string& l : o->get_lnames()) flags.push_back("--" + l);
    }
    std::vector<std::string> commands;
    for (const CLI::App* sub : deepest->get_subcommands([](const CLI::App*) { return true; }))
        commands.push_back(sub->get_name());
    // Extras land in the subcommand given or, when it takes none, in one of its parents.
    for (const std::string& arg : app.remaining(true)) {
        const bool flag = arg.starts_with("--");
        const std::string hit = suggest(arg, flag ? flags : commands);
        if (!hit.empty()) return fmt::format("did you mean {}?", hit);
    }
    return "";
}

}  // namespace rotor::train
