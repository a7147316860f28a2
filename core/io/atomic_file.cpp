#include "core/io/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "core/base/error.h"

namespace rotor::core {
namespace {

constexpr std::size_t kBufferSize = std::size_t{1} << 20;

/// A name unique within this process and across processes: path + ".tmp.<pid>.<counter>".
std::string temp_name(const std::string& path, const char* tag) {
    static std::atomic<std::uint64_t> counter{0};
    return path + tag + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

std::string parent_dir(const std::string& path) {
    const auto parent = std::filesystem::path(path).parent_path();
    return parent.empty() ? std::string(".") : parent.string();
}

/// fsync of a directory makes a rename in it durable. Failure is reported.
void sync_dir(const std::string& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) throw SystemError::from_errno("cannot open directory " + dir, errno);
    const int r = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    if (r != 0 && err != EINVAL) throw SystemError::from_errno("fsync " + dir, err);
}

void sync_tree(const std::filesystem::path& dir) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
        if (!entry.is_regular_file()) continue;
        const int fd = ::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw SystemError::from_errno("cannot open " + entry.path().string(), errno);
        const int r = ::fsync(fd);
        const int err = errno;
        ::close(fd);
        if (r != 0) throw SystemError::from_errno("fsync " + entry.path().string(), err);
    }
    sync_dir(dir.string());
}

}  // namespace

AtomicFile::AtomicFile(std::string path)
    : path_(std::move(path)), temp_path_(temp_name(path_, ".tmp.")) {
    fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) throw SystemError::from_errno("cannot create " + temp_path_, errno);
    buf_.reserve(kBufferSize);
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)),
      temp_path_(std::move(other.temp_path_)),
      fd_(std::exchange(other.fd_, -1)),
      buf_(std::move(other.buf_)),
      written_(other.written_),
      committed_(std::exchange(other.committed_, true)) {}

AtomicFile::~AtomicFile() { abandon(); }

void AtomicFile::abandon() noexcept {
    if (committed_) return;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    ::unlink(temp_path_.c_str());
    committed_ = true;  // nothing left to do
}

void AtomicFile::write(std::string_view bytes) {
    ROTOR_ASSERT(!committed_, "write after commit or abandon");
    written_ += bytes.size();
    if (buf_.size() + bytes.size() <= kBufferSize) {
        buf_.insert(buf_.end(), bytes.begin(), bytes.end());
        return;
    }
    flush();
    if (bytes.size() < kBufferSize) {
        buf_.insert(buf_.end(), bytes.begin(), bytes.end());
        return;
    }
    // Large writes go straight to the file.
    const char* p = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
        const ssize_t r = ::write(fd_, p, left);
        if (r < 0) {
            if (errno == EINTR) continue;
            throw SystemError::from_errno("cannot write " + path_, errno);  // the name given
        }
        p += r;
        left -= static_cast<std::size_t>(r);
    }
}

void AtomicFile::write(std::span<const std::byte> bytes) {
    write(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

void AtomicFile::flush() {
    const char* p = buf_.data();
    std::size_t left = buf_.size();
    while (left > 0) {
        const ssize_t r = ::write(fd_, p, left);
        if (r < 0) {
            if (errno == EINTR) continue;
            throw SystemError::from_errno("cannot write " + path_, errno);  // the name given
        }
        p += r;
        left -= static_cast<std::size_t>(r);
    }
    buf_.clear();
}

void AtomicFile::commit() {
    ROTOR_ASSERT(!committed_, "commit twice or after abandon");
    try {
        flush();
        if (::fsync(fd_) != 0) throw SystemError::from_errno("fsync " + temp_path_, errno);
        const int fd = std::exchange(fd_, -1);
        if (::close(fd) != 0) throw SystemError::from_errno("close " + temp_path_, errno);
        if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
            throw SystemError::from_errno("cannot rename " + temp_path_ + " to " + path_, errno);
        }
    } catch (...) {
        abandon();
        throw;
    }
    committed_ = true;
    sync_dir(parent_dir(path_));
}

void write_file_atomically(const std::string& path, std::string_view contents) {
    AtomicFile f(path);
    f.write(contents);
    f.commit();
}

int remove_stale_temporaries(const std::string& path) noexcept {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path target = fs::absolute(fs::path(path), ec).lexically_normal();
    if (ec) return 0;
    const std::string base = target.filename().string();
    const bool target_exists = fs::exists(target, ec);
    int removed = 0;
    for (const auto& e : fs::directory_iterator(target.parent_path(), ec)) {
        const std::string name = e.path().filename().string();
        for (const char* mark : {".tmp.", ".old."}) {
            const std::string prefix = base + mark;
            if (name.rfind(prefix, 0) != 0) continue;
            if (std::string_view(mark) == ".old." && !target_exists) continue;
            const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
            if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) {
                std::error_code rm;
                fs::remove_all(e.path(), rm);
                removed += rm ? 0 : 1;
            }
        }
    }
    return removed;
}

std::string existing_or_old(const std::string& path, std::string_view marker) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::exists(path, ec)) return path;
    const fs::path target = fs::absolute(fs::path(path), ec).lexically_normal();
    const std::string prefix = target.filename().string() + ".old.";
    std::string best;
    fs::file_time_type newest{};
    for (const auto& e : fs::directory_iterator(target.parent_path(), ec)) {
        if (e.path().filename().string().rfind(prefix, 0) != 0) continue;
        std::error_code ignored;
        if (!fs::exists(e.path() / std::string(marker), ignored)) continue;
        const auto t = fs::last_write_time(e.path(), ignored);
        if (best.empty() || t > newest) {
            best = e.path().string();
            newest = t;
        }
    }
    return best.empty() ? path : best;
}

void check_replaceable(const std::string& path, std::string_view marker, const std::string& key) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (!fs::exists(st)) return;
    if (!fs::is_directory(st))
        throw ConfigError(key, fmt::format("{} exists and is not a directory: not replaced "
                                           "(choose another path)",
                                           path));
    if (fs::is_empty(path, ec) || fs::exists(fs::path(path) / std::string(marker), ec)) return;
    throw ConfigError(key, fmt::format("{} is a non-empty directory that holds no {}: not an "
                                       "output of rotor, so it is not replaced (choose another "
                                       "path, or empty it)",
                                       path, marker));
}

void check_output_parent(const std::string& path, const std::string& key) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const std::string parent = parent_dir(path);
    if (fs::is_directory(parent, ec)) return;
    if (fs::exists(parent, ec))
        throw ConfigError(key, fmt::format("{}: {} is not a directory", path, parent));
    throw ConfigError(key, fmt::format("{}: the directory {} does not exist (rotor creates no "
                                       "directory above an output: create it first)",
                                       path, parent));
}

namespace {

/// Whether the first line of the file `path` begins with `marker`.
bool file_begins_with(const std::string& path, std::string_view marker) {
    std::string head(marker.size(), '\0');
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const ssize_t n = ::read(fd, head.data(), head.size());
    ::close(fd);
    return n == static_cast<ssize_t>(marker.size()) && head == marker;
}

}  // namespace

void check_output(const std::string& path, OutputKind kind, std::string_view marker, bool overwrite,
                  const std::string& key) {
    namespace fs = std::filesystem;
    check_output_parent(path, key);
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (!fs::exists(st)) return;
    if (kind == OutputKind::kDirectory) {
        check_replaceable(path, marker, key);  // a file, or a foreign non-empty directory
        if (fs::is_empty(path, ec)) return;
    } else {
        if (fs::is_directory(st))
            throw ConfigError(key, fmt::format("{} exists and is a directory: not replaced "
                                               "(choose another path)",
                                               path));
        if (!file_begins_with(path, marker))
            throw ConfigError(key, fmt::format("{} is a file that does not begin with {}: not an "
                                               "output of rotor, so it is not replaced (choose "
                                               "another path, or empty it)",
                                               path, marker));
    }
    if (!overwrite)
        throw ConfigError(key, fmt::format("{} exists (an earlier output of rotor): give "
                                           "--overwrite to replace it, or choose another path",
                                           path));
}

AtomicDirectory::AtomicDirectory(std::string path)
    : path_(std::move(path)), temp_path_(temp_name(path_, ".tmp.")) {
    remove_stale_temporaries(path_);
    if (::mkdir(temp_path_.c_str(), 0755) != 0) {
        throw SystemError::from_errno("cannot create directory " + temp_path_, errno);
    }
}

AtomicDirectory::~AtomicDirectory() {
    if (committed_) return;
    std::error_code ec;
    std::filesystem::remove_all(temp_path_, ec);
}

std::string AtomicDirectory::file(std::string_view name) const {
    return temp_path_ + "/" + std::string(name);
}

void AtomicDirectory::commit() {
    ROTOR_ASSERT(!committed_, "commit twice");
    sync_tree(temp_path_);
    std::error_code ec;
    std::string old;
    if (std::filesystem::exists(path_, ec)) {
        old = temp_name(path_, ".old.");
        if (::rename(path_.c_str(), old.c_str()) != 0) {
            throw SystemError::from_errno("cannot move " + path_ + " aside", errno);
        }
    }
    if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
        const int err = errno;
        if (!old.empty()) ::rename(old.c_str(), path_.c_str());  // put the old one back
        throw SystemError::from_errno("cannot rename " + temp_path_ + " to " + path_, err);
    }
    committed_ = true;
    if (!old.empty()) std::filesystem::remove_all(old, ec);
    sync_dir(parent_dir(path_));
}

}  // namespace rotor::core
