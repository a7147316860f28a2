#include "core/base/checked.h"

#include <cstdio>
#include <string>

#include "core/base/error.h"

namespace rotor::core {

SizeSource SizeSource::input(std::string_view path, std::uint64_t line, std::uint64_t col) {
    SizeSource s;
    s.name_ = path;
    s.line_ = line;
    s.col_ = col;
    return s;
}

SizeSource SizeSource::config(std::string_view key) {
    SizeSource s;
    s.config_ = true;
    s.name_ = key;
    return s;
}

void SizeSource::fail(const std::string& what) const {
    if (config_) throw ConfigError(std::string(name_), what);
    throw InputError(std::string(name_), line_, col_, what);
}

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const SizeSource& source,
                          std::string_view what) {
    std::uint64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r))
        source.fail(std::string(what) + " overflows 64 bits: " + std::to_string(a) + " x " +
                    std::to_string(b));
    return r;
}

std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const SizeSource& source,
                          std::string_view what) {
    std::uint64_t r = 0;
    if (__builtin_add_overflow(a, b, &r))
        source.fail(std::string(what) + " overflows 64 bits: " + std::to_string(a) + " + " +
                    std::to_string(b));
    return r;
}

std::uint64_t checked_at_most(std::uint64_t v, std::uint64_t max, const SizeSource& source,
                              std::string_view what) {
    if (v > max)
        source.fail(std::string(what) + " = " + std::to_string(v) + " exceeds the limit " +
                    std::to_string(max));
    return v;
}

std::string human_bytes(std::uint64_t b) {
    const auto one = [](double v, const char* unit) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.1f %s", v, unit);
        return std::string(buf);
    };
    if (b >= (1ULL << 30))
        return one(static_cast<double>(b) / static_cast<double>(1ULL << 30), "GiB");
    if (b >= (1ULL << 20))
        return one(static_cast<double>(b) / static_cast<double>(1ULL << 20), "MiB");
    if (b >= (1ULL << 10))
        return one(static_cast<double>(b) / static_cast<double>(1ULL << 10), "KiB");
    // Below 1 KiB the bytes themselves: "0.0 KiB" told a user with a tiny --max-memory nothing.
    return std::to_string(b) + (b == 1 ? " byte" : " bytes");
}

}  // namespace rotor::core
