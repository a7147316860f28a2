#include "core/io/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/base/error.h"

namespace rotor::core {
namespace {

/// A file read with read(2), with up to two bytes pushed back after sniffing the magic.
class FileSource final : public ByteSource {
  public:
    explicit FileSource(std::string path) : path_(std::move(path)) {
        fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd_ < 0) {
            const int err = errno;
            throw InputError(path_, std::string("cannot open: ") + std::strerror(err));
        }
        struct stat st {};
        if (::fstat(fd_, &st) == 0 && S_ISDIR(st.st_mode)) {
            ::close(fd_);
            throw InputError(path_, "is a directory, expected a file");
        }
#ifdef POSIX_FADV_SEQUENTIAL
        ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    }
    FileSource(const FileSource&) = delete;
    FileSource& operator=(const FileSource&) = delete;
    ~FileSource() override { ::close(fd_); }

    std::size_t read(std::span<char> out) override {
        std::size_t n = 0;
        while (n < out.size() && pushback_pos_ < pushback_.size()) {
            out[n++] = pushback_[pushback_pos_++];
        }
        if (n > 0) return n;
        for (;;) {
            const ssize_t r = ::read(fd_, out.data(), out.size());
            if (r >= 0) return static_cast<std::size_t>(r);
            if (errno == EINTR) continue;
            const int err = errno;
            throw InputError(path_, std::string("read failed: ") + std::strerror(err));
        }
    }
    const std::string& name() const override { return path_; }

    /// Reads the first bytes (up to 2) and keeps them to be returned again by read().
    std::string_view peek_prefix() {
        char buf[2];
        std::size_t got = 0;
        while (got < sizeof buf) {
            const std::size_t r = read(std::span<char>(buf + got, sizeof buf - got));
            if (r == 0) break;
            got += r;
        }
        pushback_.assign(buf, got);
        pushback_pos_ = 0;
        return pushback_;
    }

  private:
    std::string path_;
    int fd_ = -1;
    std::string pushback_;
    std::size_t pushback_pos_ = 0;
};

class MemorySource final : public ByteSource {
  public:
    MemorySource(std::string name, std::string_view data) : name_(std::move(name)), data_(data) {}
    std::size_t read(std::span<char> out) override {
        const std::size_t n = std::min(out.size(), data_.size() - pos_);
        std::memcpy(out.data(), data_.data() + pos_, n);
        pos_ += n;
        return n;
    }
    const std::string& name() const override { return name_; }

  private:
    std::string name_;
    std::string_view data_;
    std::size_t pos_ = 0;
};

/// Decompresses a gzip stream (one or more concatenated members, as gzip(1) writes them) read
/// from another source with zlib's inflate. Any corruption, a bad check value, a truncated
/// member or bytes after the last member that are not another member is an InputError.
class GzipSource final : public ByteSource {
  public:
    explicit GzipSource(std::unique_ptr<ByteSource> raw) : raw_(std::move(raw)), in_(kInSize) {
        std::memset(&z_, 0, sizeof z_);
        if (inflateInit2(&z_, 15 + 16) != Z_OK) throw SystemError("zlib: inflateInit2 failed");
    }
    GzipSource(const GzipSource&) = delete;
    GzipSource& operator=(const GzipSource&) = delete;
    ~GzipSource() override { inflateEnd(&z_); }

    std::size_t read(std::span<char> out) override {
        if (done_ || out.empty()) return 0;
        z_.next_out = reinterpret_cast<Bytef*>(out.data());
        z_.avail_out = static_cast<uInt>(std::min<std::size_t>(out.size(), 1u << 30));
        const uInt want = z_.avail_out;
        while (z_.avail_out == want) {
            if (z_.avail_in == 0) {
                const std::size_t r = raw_->read(in_);
                if (r == 0) {
                    if (member_started_) fail("truncated gzip data (unexpected end of file)");
                    done_ = true;
                    break;
                }
                z_.next_in = reinterpret_cast<Bytef*>(in_.data());
                z_.avail_in = static_cast<uInt>(r);
            }
            if (!member_started_) {
                // Between members: only another gzip header may follow.
                if (z_.next_in[0] != 0x1f) fail("trailing data after the gzip stream");
                member_started_ = true;
            }
            const int ret = inflate(&z_, Z_NO_FLUSH);
            if (ret == Z_STREAM_END) {
                member_started_ = false;
                if (inflateReset(&z_) != Z_OK) fail("zlib: inflateReset failed");
                continue;
            }
            if (ret == Z_BUF_ERROR) continue;  // needs more input; loop reads it
            if (ret != Z_OK) {
                fail(std::string("corrupt gzip data (") + (z_.msg ? z_.msg : "zlib error") + ")");
            }
        }
        return want - z_.avail_out;
    }
    const std::string& name() const override { return raw_->name(); }

  private:
    static constexpr std::size_t kInSize = std::size_t{1} << 18;
    [[noreturn]] void fail(const std::string& what) { throw InputError(raw_->name(), what); }

    std::unique_ptr<ByteSource> raw_;
    std::vector<char> in_;
    z_stream z_;
    bool member_started_ = false;
    bool done_ = false;
};

}  // namespace

bool has_gzip_magic(std::string_view prefix) noexcept {
    return prefix.size() >= 2 && static_cast<unsigned char>(prefix[0]) == 0x1f &&
           static_cast<unsigned char>(prefix[1]) == 0x8b;
}

std::unique_ptr<ByteSource> open_byte_source(const std::string& path) {
    auto file = std::make_unique<FileSource>(path);
    if (has_gzip_magic(file->peek_prefix())) return std::make_unique<GzipSource>(std::move(file));
    return file;
}

std::unique_ptr<ByteSource> memory_byte_source(std::string name, std::string_view data) {
    const bool gz = has_gzip_magic(data);
    auto mem = std::make_unique<MemorySource>(std::move(name), data);
    if (gz) return std::make_unique<GzipSource>(std::move(mem));
    return mem;
}

}  // namespace rotor::core
