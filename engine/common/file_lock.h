// An advisory lock on a file that another process can test: two running instances of
// Hearth must not both manage one cache directory. Held until the object is destroyed
// (or the process dies: the operating system drops it, so a crash leaves no stale lock).
// POSIX: flock(2). Windows: LockFileEx on the whole file.
#pragma once

#include <filesystem>
#include <memory>

#include "common/result.h"

namespace hearth {

class FileLock {
  public:
    // The error code when the lock is held (by another process, or another FileLock of
    // this one), as opposed to a file that cannot be opened.
    static constexpr const char* kHeld = "lock held";

    // Creates the file if needed and takes an exclusive lock without waiting. Fails with
    // a message when another process holds it (code kHeld) or the file cannot be created.
    static Result<std::unique_ptr<FileLock>> try_acquire(const std::filesystem::path& path);
    ~FileLock();
    FileLock(const FileLock&) = delete;
    FileLock& operator=(const FileLock&) = delete;

  private:
    FileLock() = default;
#ifdef _WIN32
    void* handle_ = nullptr;
#else
    int fd_ = -1;
#endif
};

}  // namespace hearth
