#include "core/io/whole_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/base/error.h"

namespace rotor::core {

std::string read_whole_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, "cannot open: " + std::string(std::strerror(errno)));
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw InputError(path, "cannot read: " + std::string(std::strerror(errno)));
    return ss.str();
}

void check_json_text(std::string_view text, const std::string& path) {
    const std::size_t nul = text.find('\0');
    if (nul == std::string_view::npos) return;
    const std::string_view before = text.substr(0, nul);
    const std::size_t line = 1 + static_cast<std::size_t>(std::ranges::count(before, '\n'));
    const std::size_t line_start = before.rfind('\n');
    const std::size_t col = nul - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
    throw InputError(path, line, col,
                     "a NUL byte, which JSON text never holds: the file is damaged or has "
                     "something appended");
}

std::string read_json_text(const std::string& path) {
    std::string text = read_whole_file(path);
    check_json_text(text, path);
    return text;
}

}  // namespace rotor::core
