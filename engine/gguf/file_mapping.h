// A read-only memory mapping of a whole file. The only platform-specific code of the
// GGUF reader lives in file_mapping.cpp (POSIX mmap, Windows file mappings).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "common/result.h"

namespace hearth::gguf {

class FileMapping {
  public:
    static Result<std::unique_ptr<FileMapping>> open(const std::string& path);
    ~FileMapping();
    FileMapping(const FileMapping&) = delete;
    FileMapping& operator=(const FileMapping&) = delete;

    std::span<const std::byte> bytes() const { return {data_, size_}; }
    // Reads the whole file in and fills the mapping's page table now (Linux:
    // MADV_POPULATE_READ, or read-ahead advice on older kernels; elsewhere nothing), for a
    // caller about to use every byte: loading a model's weights.
    void prefetch() const;
    // What happened to the file since it was mapped, or empty when nothing did. POSIX
    // lets another program truncate or rewrite a mapped file (reading a page past a
    // truncated end then raises SIGBUS), so the engine asks before each step: a file
    // truncated, grown or rewritten in place. A file replaced by a rename, or deleted,
    // leaves this mapping intact and is not a change. Windows forbids writing to the
    // file while it is mapped (it is opened with read sharing only): always empty there.
    // A truncation in the middle of a read does not end the process: the pages past the
    // new end read as zeros (truncation_guard.h), and this says what happened.
    std::string changed() const;

  private:
    FileMapping() = default;
    const std::byte* data_ = nullptr;
    std::size_t size_ = 0;
#ifdef _WIN32
    void* file_ = nullptr;
    void* mapping_ = nullptr;
#else
    int fd_ = -1;  // kept open to ask what became of the file
    long long mtime_ns_ = 0;
    int guard_ = -1;  // truncation_guard slot
#endif
};

}  // namespace hearth::gguf
