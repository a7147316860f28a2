// Atomic output: a file (or a directory) appears at its final path complete or not at all.
//
// Every output file of rotor goes through this: write to a temporary name in the same
// directory, fsync, rename(2) into place. If anything throws before commit(), the destructor
// removes the temporary, so a failed command leaves no output behind.
//
//     AtomicFile f(path);
//     f.write("header\n");
//     f.write_pod(std::span<const std::uint64_t>(offsets));
//     f.commit();          // now `path` exists, complete
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace rotor::core {

/// A file written under `<path>.tmp.<pid>.<n>` and renamed to `path` by commit(). Writes are
/// buffered (1 MiB). Errors (disk full, permission, missing directory) throw SystemError naming
/// the path. Not thread-safe. Movable, not copyable.
class AtomicFile {
  public:
    /// Creates the temporary file (mode 0644 minus umask). Throws SystemError on failure.
    explicit AtomicFile(std::string path);
    AtomicFile(AtomicFile&& other) noexcept;
    AtomicFile& operator=(AtomicFile&&) = delete;
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    /// Without commit(): closes and removes the temporary. Never throws.
    ~AtomicFile();

    /// Appends bytes. Precondition: not committed.
    void write(std::string_view bytes);
    void write(std::span<const std::byte> bytes);
    /// Appends the raw bytes of trivially copyable values (native byte order).
    template <class T>
    void write_pod(std::span<const T> values) {
        static_assert(std::is_trivially_copyable_v<T>);
        write(std::as_bytes(values));
    }
    template <class T>
    void write_pod(const T& value) {
        write_pod(std::span<const T>(&value, 1));
    }
    /// Bytes written so far.
    std::size_t size() const noexcept { return written_; }

    /// Flushes, fsyncs, renames the temporary to the final path and fsyncs the directory.
    /// Throws SystemError; on failure the temporary is removed and `path` is untouched.
    void commit();
    /// Removes the temporary now; later writes are a bug. Idempotent.
    void abandon() noexcept;

    const std::string& path() const noexcept { return path_; }
    const std::string& temp_path() const noexcept { return temp_path_; }

  private:
    void flush();

    std::string path_;
    std::string temp_path_;
    int fd_ = -1;
    std::vector<char> buf_;
    std::size_t written_ = 0;
    bool committed_ = false;
};

/// Writes `contents` to `path` atomically (AtomicFile, one write, commit).
void write_file_atomically(const std::string& path, std::string_view contents);

/// Removes what killed processes left beside `path`: `<path>.tmp.<pid>.<n>` and
/// `<path>.old.<pid>.<n>` (files or directories of AtomicFile and AtomicDirectory) whose process
/// is gone (SIGKILL gives no chance to clean up). An `.old` is kept while `path` itself is
/// missing: killed between AtomicDirectory::commit's two renames, it is the only whole copy.
/// Returns how many were removed. Never throws.
int remove_stale_temporaries(const std::string& path) noexcept;

/// The newest `<path>.old.<pid>.<n>` directory holding `marker`, when `path` does not exist
/// (a process killed between AtomicDirectory::commit's two renames); else `path`.
std::string existing_or_old(const std::string& path, std::string_view marker);

/// Throws ConfigError(`key`) when `path` exists and is not a directory this program may replace
/// whole: a non-empty directory without `marker` (say a model's params.json), or a file.
void check_replaceable(const std::string& path, std::string_view marker, const std::string& key);

/// The two shapes of an output: a directory of files (LDA and MF models, exports) or one file
/// (Lasso and logistic regression models).
enum class OutputKind { kDirectory, kFile };

/// One rule for every output a command is asked to write (`--out` of every model's `train` and
/// `export`), checked before any work: the parent directory exists (nothing is created above
/// the output); `path` is new, an empty directory, or an earlier output of rotor (a directory
/// holding `marker`, or a file whose first line begins with `marker`), replaced only when
/// `overwrite` (the user's `--overwrite`). Anything else (a non-empty directory or a file that is
/// not rotor's, a file where a directory goes, or the reverse) is never replaced. Throws
/// ConfigError(`key`) naming the path.
void check_output(const std::string& path, OutputKind kind, std::string_view marker, bool overwrite,
                  const std::string& key);

/// Throws ConfigError(`key`) unless the directory `path` goes into exists (a file output such as
/// --metrics: rotor creates no directory for it).
void check_output_parent(const std::string& path, const std::string& key);

/// A directory built under `<path>.tmp.<pid>.<n>` and moved to `path` by commit(). If `path`
/// already exists it is replaced: it is first renamed aside, the new one renamed in, then the old
/// one deleted (two renames; a crash between them leaves `<path>.old.<pid>.<n>` behind, never a
/// half-written `path`). Without commit() the destructor removes the temporary tree.
/// Files inside may be written directly (they are not visible until commit()).
class AtomicDirectory {
  public:
    /// Removes the stale temporaries of `path` (remove_stale_temporaries), then creates the
    /// temporary directory. Throws SystemError.
    explicit AtomicDirectory(std::string path);
    AtomicDirectory(const AtomicDirectory&) = delete;
    AtomicDirectory& operator=(const AtomicDirectory&) = delete;
    ~AtomicDirectory();

    /// Where to write the contents before commit().
    const std::string& temp_path() const noexcept { return temp_path_; }
    /// `temp_path() + "/" + name`.
    std::string file(std::string_view name) const;
    /// fsyncs the files inside and moves the directory into place. Throws SystemError.
    void commit();

    const std::string& path() const noexcept { return path_; }

  private:
    std::string path_;
    std::string temp_path_;
    bool committed_ = false;
};

}  // namespace rotor::core
