#include "core/io/line_reader.h"

#include <algorithm>
#include <cstring>

#include "core/base/error.h"

namespace rotor::core {
namespace {

/// Drops a UTF-8 byte order mark from the front of the first line.
void drop_bom(std::string_view& line) {
    if (line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);
}

}  // namespace

LineReader::LineReader(const std::string& path) : LineReader(open_byte_source(path)) {}

LineReader::LineReader(std::unique_ptr<ByteSource> source, std::size_t buffer_bytes)
    : source_(std::move(source)), buf_(std::max<std::size_t>(buffer_bytes, 1)) {}

void LineReader::fail(std::uint64_t col, const std::string& what) const {
    throw InputError(source_->name(), line_no_, col, what);
}

bool LineReader::refill() {
    if (eof_) return false;
    // Keep the unread tail, at the front; grow if a single line fills the whole buffer.
    if (begin_ > 0) {
        std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
        end_ -= begin_;
        begin_ = 0;
    }
    if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);
    const std::size_t got = source_->read(std::span<char>(buf_.data() + end_, buf_.size() - end_));
    if (got == 0) {
        eof_ = true;
        return false;
    }
    end_ += got;
    return true;
}

bool LineReader::next(std::string_view& line) {
    std::size_t scanned = begin_;  // bytes before this position hold no '\n'
    for (;;) {
        const void* nl = std::memchr(buf_.data() + scanned, '\n', end_ - scanned);
        if (nl != nullptr) {
            const std::size_t pos =
                static_cast<std::size_t>(static_cast<const char*>(nl) - buf_.data());
            std::size_t len = pos - begin_;
            if (len > 0 && buf_[pos - 1] == '\r') --len;
            line = std::string_view(buf_.data() + begin_, len);
            begin_ = pos + 1;
            if (++line_no_ == 1) drop_bom(line);
            return true;
        }
        const std::size_t consumed = begin_;
        scanned = end_;
        if (!refill()) {
            if (begin_ == end_) return false;
            std::size_t len = end_ - begin_;
            if (buf_[end_ - 1] == '\r') --len;
            line = std::string_view(buf_.data() + begin_, len);
            begin_ = end_;
            if (++line_no_ == 1) drop_bom(line);
            return true;
        }
        scanned -= consumed;  // refill() moved the unread bytes to the front
    }
}

}  // namespace rotor::core
