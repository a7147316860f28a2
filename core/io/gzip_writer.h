// gzip compression into an AtomicFile.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "core/io/atomic_file.h"

struct z_stream_s;

namespace rotor::core {

/// Compresses everything written into one gzip member appended to `out` (which must outlive
/// this). Call finish() before out.commit(). Not thread-safe.
class GzipWriter {
  public:
    /// `level` is zlib's 1 (fast) .. 9 (small); 6 is gzip(1)'s default.
    explicit GzipWriter(AtomicFile& out, int level = 6);
    GzipWriter(const GzipWriter&) = delete;
    GzipWriter& operator=(const GzipWriter&) = delete;
    ~GzipWriter();

    void write(std::string_view bytes);
    /// Writes the gzip trailer. Further writes are a bug.
    void finish();

  private:
    void deflate_some(int flush);

    AtomicFile& out_;
    std::vector<char> zout_;
    std::unique_ptr<z_stream_s> z_;
    bool finished_ = false;
};

}  // namespace rotor::core
