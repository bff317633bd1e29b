// A process of its own for tst_file_mapping (Qt Test's crash handler would catch the
// signal in the suite itself):
//   sigbus_probe watched A B    maps A with FileMapping (the guard watches it), truncates
//                               it, reads past the new end: exit 0 when that read zeros
//                               and changed() says so, else 2
//   sigbus_probe unwatched A B  maps A with FileMapping (installing the guard), maps B
//                               with plain mmap, truncates B and reads past its end: the
//                               process must die of SIGBUS (exit 4 if the read returned)
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "gguf/file_mapping.h"

int main(int argc, char** argv) {
    if (argc != 4) return 64;
    const std::string mode = argv[1];
    auto mapped = hearth::gguf::FileMapping::open(argv[2]);
    if (!mapped || (*mapped)->bytes().size() < 16 * 4096) return 65;
    if (mode == "watched") {
        if (truncate(argv[2], 4096) != 0) return 66;
        const volatile std::byte* p = (*mapped)->bytes().data();
        const auto value = static_cast<int>(p[10 * 4096]);
        const std::string why = (*mapped)->changed();
        std::printf("read %d; changed: %s\n", value, why.c_str());
        return value == 0 && why.find("was truncated") != std::string::npos ? 0 : 2;
    }
    if (mode != "unwatched") return 64;
    const int fd = open(argv[3], O_RDWR);
    void* p = fd < 0 ? MAP_FAILED : mmap(nullptr, 16 * 4096, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED || ftruncate(fd, 4096) != 0) return 67;
    const volatile unsigned char* b = static_cast<const unsigned char*>(p);
    std::printf("read %d past the end without a signal\n", static_cast<int>(b[10 * 4096]));
    return 4;
}
