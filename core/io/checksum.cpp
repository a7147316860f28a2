#include "core/io/checksum.h"

#include <zlib.h>

#include <algorithm>

namespace rotor::core {

std::uint32_t crc32(std::string_view bytes, std::uint32_t crc) {
    uLong c = crc;
    while (!bytes.empty()) {
        const std::size_t n = std::min<std::size_t>(bytes.size(), 1U << 30);
        c = ::crc32(c, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(n));
        bytes.remove_prefix(n);
    }
    return static_cast<std::uint32_t>(c);
}

}  // namespace rotor::core
