// Counted nouns for messages: "1 document", "2 documents", so no output says "1 workers".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rotor {

/// "1 document", "0 documents", "12 documents": `noun` with an "s" unless n is 1 (`plural_form`
/// instead of noun + "s" when given, e.g. plural(n, "document has", "documents have")).
inline std::string plural(std::uint64_t n, std::string_view noun,
                          std::string_view plural_form = {}) {
    std::string s = std::to_string(n) + ' ';
    if (n == 1) return s.append(noun);
    if (!plural_form.empty()) return s.append(plural_form);
    return s.append(noun).append("s");
}

}  // namespace rotor
