#include "common/file_lock.h"

#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#else
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#endif

namespace hearth {

#ifdef _WIN32

Result<std::unique_ptr<FileLock>> FileLock::try_acquire(const std::filesystem::path& path) {
    HANDLE h = CreateFileW(path.c_str(), GENERIC_READ | GENERIC_WRITE,
                           FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                           OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (h == INVALID_HANDLE_VALUE)
        return make_error("cannot open the lock file " + path.string() + " (error " +
                          std::to_string(GetLastError()) + ")");
    OVERLAPPED ov{};
    if (!LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, MAXDWORD, MAXDWORD,
                    &ov)) {
        CloseHandle(h);
        return Error{path.string() + " is locked by another running Hearth", FileLock::kHeld};
    }
    std::unique_ptr<FileLock> lock(new FileLock);
    lock->handle_ = h;
    return lock;
}

FileLock::~FileLock() {
    if (handle_) CloseHandle(static_cast<HANDLE>(handle_));  // releases the lock
}

#else

Result<std::unique_ptr<FileLock>> FileLock::try_acquire(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return make_error("cannot open the lock file " + path.string() + ": " +
                          std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        ::close(fd);
        if (err == EWOULDBLOCK)
            return Error{path.string() + " is locked by another running Hearth", FileLock::kHeld};
        return make_error("cannot lock " + path.string() + ": " + std::strerror(err));
    }
    std::unique_ptr<FileLock> lock(new FileLock);
    lock->fd_ = fd;
    return lock;
}

FileLock::~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
}

#endif

}  // namespace hearth
