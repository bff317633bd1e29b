#include "gguf/file_mapping.h"

#include "gguf/truncation_guard.h"

#include <cerrno>
#include <cstring>

#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#else
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace hearth::gguf {

#ifdef _WIN32

namespace {
std::string last_error_text() {
    char buf[256] = {};
    FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr,
                   GetLastError(), 0, buf, sizeof(buf), nullptr);
    return buf;
}
std::wstring widen(const std::string& utf8) {
    const int n = MultiByteToWideChar(CP_UTF8, 0, utf8.c_str(), -1, nullptr, 0);
    std::wstring out(static_cast<size_t>(n > 0 ? n : 1), L'\0');
    MultiByteToWideChar(CP_UTF8, 0, utf8.c_str(), -1, out.data(), n);
    out.resize(wcslen(out.c_str()));
    return out;
}
}  // namespace

Result<std::unique_ptr<FileMapping>> FileMapping::open(const std::string& path) {
    std::unique_ptr<FileMapping> m(new FileMapping);
    m->file_ = CreateFileW(widen(path).c_str(), GENERIC_READ, FILE_SHARE_READ, nullptr,
                           OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (m->file_ == INVALID_HANDLE_VALUE) {
        m->file_ = nullptr;
        return make_error("cannot open " + path + ": " + last_error_text());
    }
    LARGE_INTEGER size;
    if (!GetFileSizeEx(m->file_, &size))
        return make_error("cannot read the size of " + path + ": " + last_error_text());
    m->size_ = static_cast<size_t>(size.QuadPart);
    if (m->size_ == 0) return m;  // nothing to map; the parser reports the empty file
    m->mapping_ = CreateFileMappingW(m->file_, nullptr, PAGE_READONLY, 0, 0, nullptr);
    if (!m->mapping_) return make_error("cannot map " + path + ": " + last_error_text());
    void* view = MapViewOfFile(m->mapping_, FILE_MAP_READ, 0, 0, 0);
    if (!view) return make_error("cannot map " + path + ": " + last_error_text());
    m->data_ = static_cast<const std::byte*>(view);
    return m;
}

void FileMapping::prefetch() const {
#if _WIN32_WINNT >= 0x0602  // Windows 8: reads the range in (no page-table fill)
    if (!data_) return;
    WIN32_MEMORY_RANGE_ENTRY range{const_cast<std::byte*>(data_), size_};
    PrefetchVirtualMemory(GetCurrentProcess(), 1, &range, 0);
#endif
}

std::string FileMapping::changed() const {
    return {};
}

FileMapping::~FileMapping() {
    if (data_) UnmapViewOfFile(data_);
    if (mapping_) CloseHandle(mapping_);
    if (file_) CloseHandle(file_);
}

#else

namespace {
long long mtime_ns(const struct stat& st) {
#ifdef __APPLE__
    return static_cast<long long>(st.st_mtimespec.tv_sec) * 1'000'000'000LL +
           st.st_mtimespec.tv_nsec;
#else
    return static_cast<long long>(st.st_mtim.tv_sec) * 1'000'000'000LL + st.st_mtim.tv_nsec;
#endif
}
}  // namespace

Result<std::unique_ptr<FileMapping>> FileMapping::open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return make_error("cannot open " + path + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        return make_error("cannot read the size of " + path + ": " + std::strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return make_error(path + " is not a regular file");
    }
    std::unique_ptr<FileMapping> m(new FileMapping);
    m->size_ = static_cast<size_t>(st.st_size);
    if (m->size_ > 0) {
        void* addr = ::mmap(nullptr, m->size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (addr == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            return make_error("cannot map " + path + ": " + std::strerror(err));
        }
        m->data_ = static_cast<const std::byte*>(addr);
        m->guard_ = truncation_guard::watch(addr, m->size_);
    }
    m->fd_ = fd;
    m->mtime_ns_ = mtime_ns(st);
    return m;
}

std::string FileMapping::changed() const {
    struct stat st {};
    if (fd_ < 0 || ::fstat(fd_, &st) != 0) return {};
    const auto now = static_cast<size_t>(st.st_size);
    if (now < size_)
        return "was truncated (" + std::to_string(now) + " of " + std::to_string(size_) +
               " bytes left)";
    if (now > size_) return "was rewritten (it grew to " + std::to_string(now) + " bytes)";
    if (mtime_ns(st) != mtime_ns_) return "was rewritten in place";
    // Cut short and grown back (or rewritten within the same second on a file system with
    // coarse times) after a read past its end found nothing there.
    if (truncation_guard::faulted(guard_)) return "was truncated and grew back";
    return {};
}

void FileMapping::prefetch() const {
    if (!data_) return;
        // One call fills the page table (as llama.cpp's MAP_POPULATE does at load): the first
        // prompt of a 1B model otherwise took ~12,000 faults on it. Older kernels: read-ahead.
#if defined(MADV_POPULATE_READ)
    if (::madvise(const_cast<std::byte*>(data_), size_, MADV_POPULATE_READ) == 0) return;
#endif
    ::madvise(const_cast<std::byte*>(data_), size_, MADV_WILLNEED);
}

FileMapping::~FileMapping() {
    truncation_guard::unwatch(guard_);
    if (data_) ::munmap(const_cast<std::byte*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
}

#endif

}  // namespace hearth::gguf
