#include "core/io/gzip_writer.h"

#include <zlib.h>

#include <memory>

#include "core/base/error.h"

namespace rotor::core {

GzipWriter::GzipWriter(AtomicFile& out, int level)
    : out_(out), zout_(std::size_t{1} << 18), z_(std::make_unique<z_stream>()) {
    // windowBits 15 + 16: a gzip header and trailer rather than a zlib one.
    if (deflateInit2(z_.get(), level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        throw SystemError("zlib: deflateInit2 failed");
    }
}

GzipWriter::~GzipWriter() { deflateEnd(z_.get()); }

void GzipWriter::deflate_some(int flush) {
    for (;;) {
        z_->next_out = reinterpret_cast<Bytef*>(zout_.data());
        z_->avail_out = static_cast<uInt>(zout_.size());
        const int ret = deflate(z_.get(), flush);
        ROTOR_ASSERT(ret != Z_STREAM_ERROR, "deflate state clobbered");
        out_.write(std::string_view(zout_.data(), zout_.size() - z_->avail_out));
        if (flush == Z_FINISH ? ret == Z_STREAM_END : z_->avail_out != 0) return;
    }
}

void GzipWriter::write(std::string_view bytes) {
    ROTOR_ASSERT(!finished_, "write after finish");
    while (!bytes.empty()) {
        const std::size_t n = std::min<std::size_t>(bytes.size(), std::size_t{1} << 30);
        z_->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
        z_->avail_in = static_cast<uInt>(n);
        deflate_some(Z_NO_FLUSH);
        bytes.remove_prefix(n);
    }
}

void GzipWriter::finish() {
    ROTOR_ASSERT(!finished_, "finish twice");
    z_->next_in = nullptr;
    z_->avail_in = 0;
    deflate_some(Z_FINISH);
    finished_ = true;
}

}  // namespace rotor::core
