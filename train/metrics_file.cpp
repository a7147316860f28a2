#include "train/metrics_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/io/atomic_file.h"

namespace rotor::train {

std::optional<MetricsLine> parse_metrics_line(std::string_view line) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) return std::nullopt;
    const auto iter = j.find("iter");
    if (iter == j.end() || !iter->is_number_unsigned()) return std::nullopt;
    MetricsLine m;
    m.iter = iter->get<std::uint64_t>();
    const auto time = j.find("time_s");
    if (time != j.end() && time->is_number()) m.time_s = time->get<double>();
    return m;
}

namespace {

/// The whole content of the open file `fd` (named `path` in errors).
std::string read_all(int fd, const std::string& path) {
    std::string text;
    char buf[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw SystemError::from_errno("cannot read " + path, errno);
        if (n == 0) return text;
        text.append(buf, static_cast<std::size_t>(n));
    }
}

}  // namespace

MetricsFile::MetricsFile(std::string path, std::optional<std::uint64_t> resume_at)
    : path_(std::move(path)) {
    core::remove_stale_temporaries(path_);
    const int flags = O_RDWR | O_CREAT | O_CLOEXEC | (resume_at ? 0 : O_TRUNC);
    fd_ = ::open(path_.c_str(), flags, 0644);
    if (fd_ < 0) throw SystemError::from_errno("cannot create " + path_, errno);
    if (!resume_at) return;
    // Keep the whole records up to the checkpoint's iteration; cut the rest.
    const std::string text = read_all(fd_, path_);
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t end = text.find('\n', at);
        if (end == std::string::npos) break;  // half-written by a killed run
        const std::optional<MetricsLine> m =
            parse_metrics_line(std::string_view(text).substr(at, end - at));
        if (!m || m->iter > *resume_at) break;
        last_iter_ = m->iter;
        resumed_time_s_ = m->time_s;
        ++kept_;
        at = end + 1;
    }
    size_ = at;
    if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0 ||
        ::lseek(fd_, static_cast<off_t>(size_), SEEK_SET) < 0)
        throw SystemError::from_errno("cannot write " + path_, errno);
}

MetricsFile::~MetricsFile() {
    if (fd_ >= 0) ::close(fd_);
}

void MetricsFile::append(std::uint64_t iter, std::string_view json) {
    if (fd_ < 0) return;  // failed earlier (or committed)
    const std::string line = std::string(json) + "\n";
    std::size_t done = 0;
    while (done < line.size()) {
        const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            // A full disk or a size limit: the file keeps its whole records, training goes on.
            failure_ = std::strerror(errno);
            if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0)
                failure_ += "; its last line is half-written";
            ::close(std::exchange(fd_, -1));
            return;
        }
        done += static_cast<std::size_t>(n);
    }
    size_ += line.size();
    last_iter_ = iter;
}

void MetricsFile::commit() {
    if (!failure_.empty())
        throw SystemError(
            fmt::format("cannot write {}: {} (it holds the records up to iteration {})", path_,
                        failure_, last_iter_));
    if (fd_ < 0) return;
    const int fd = std::exchange(fd_, -1);
    if (::fsync(fd) != 0) {
        const int err = errno;
        ::close(fd);
        throw SystemError::from_errno("fsync " + path_, err);
    }
    if (::close(fd) != 0) throw SystemError::from_errno("close " + path_, errno);
}

}  // namespace rotor::train
