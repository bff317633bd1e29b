// FileMapping and its truncation guard: a mapped file that another program truncates reads
// as zeros past its new end instead of ending the process with SIGBUS, says what happened,
// and a SIGBUS outside the watched mappings still ends the process.
#include <QTemporaryDir>
#include <QTest>

#ifndef _WIN32
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <filesystem>
#include <fstream>
#include <vector>

#include "gguf/file_mapping.h"

using namespace hearth;

namespace {

constexpr std::size_t kBytes = 64 * 1024;  // 16 pages of 4 KiB

std::string write_pattern(const QTemporaryDir& dir, const char* name) {
    const std::string path = dir.filePath(name).toStdString();
    std::vector<char> bytes(kBytes);
    for (std::size_t i = 0; i < kBytes; ++i) bytes[i] = static_cast<char>(1 + i % 251);
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(kBytes));
    return path;
}

// Reads through a volatile pointer so that the compiler cannot skip or reorder the load.
unsigned char read_at(std::span<const std::byte> bytes, std::size_t i) {
    const volatile std::byte* p = bytes.data() + i;
    return static_cast<unsigned char>(*p);
}

}  // namespace

class TestFileMapping : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    // The probe's exit status, or minus the signal that ended it.
    int probe(const char* mode) {
        const std::string a = write_pattern(dir_, "probe-a.bin");
        const std::string b = write_pattern(dir_, "probe-b.bin");
        const pid_t child = fork();
        if (child == 0) {
            execl(HEARTH_SIGBUS_PROBE, HEARTH_SIGBUS_PROBE, mode, a.c_str(), b.c_str(), nullptr);
            _exit(127);
        }
        int status = 0;
        if (child < 0 || waitpid(child, &status, 0) != child) return 1000;
        return WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status);
    }

  private slots:
    void unchangedFileSaysNothing() {
        const std::string path = write_pattern(dir_, "same.bin");
        auto m = gguf::FileMapping::open(path);
        QVERIFY(m);
        QCOMPARE((*m)->bytes().size(), kBytes);
        QCOMPARE(read_at((*m)->bytes(), 1000), static_cast<unsigned char>(1 + 1000 % 251));
        QCOMPARE((*m)->changed(), std::string());
    }

#ifndef _WIN32
    void truncatedFileReadsZerosPastItsEnd() {
        const std::string path = write_pattern(dir_, "cut.bin");
        auto m = gguf::FileMapping::open(path);
        QVERIFY(m);
        const auto bytes = (*m)->bytes();
        QCOMPARE(read_at(bytes, kBytes - 1), static_cast<unsigned char>(1 + (kBytes - 1) % 251));
        std::filesystem::resize_file(path, 3 * 4096 + 100);
        // Without the guard the next line ends the process with SIGBUS.
        QCOMPARE(read_at(bytes, kBytes - 1), static_cast<unsigned char>(0));
        QCOMPARE(read_at(bytes, 8 * 4096), static_cast<unsigned char>(0));
        // What is still in the file still reads as the file.
        QCOMPARE(read_at(bytes, 5), static_cast<unsigned char>(6));
        QCOMPARE(read_at(bytes, 3 * 4096 + 99),
                 static_cast<unsigned char>(1 + (3 * 4096 + 99) % 251));
        const std::string why = (*m)->changed();
        QVERIFY2(why.find("was truncated") != std::string::npos, why.c_str());
        m->reset();  // unmapping the zero pages with the rest is fine
    }

    void truncatedAndGrownBackStillSaysSo() {
        const std::string path = write_pattern(dir_, "regrown.bin");
        auto m = gguf::FileMapping::open(path);
        QVERIFY(m);
        const auto mtime = std::filesystem::last_write_time(path);
        std::filesystem::resize_file(path, 4096);
        QCOMPARE(read_at((*m)->bytes(), 10 * 4096), static_cast<unsigned char>(0));
        std::filesystem::resize_file(path, kBytes);
        std::filesystem::last_write_time(path, mtime);  // as if nothing happened
        QCOMPARE((*m)->changed(), std::string("was truncated and grew back"));
    }

    void sigbusElsewhereStillEndsTheProcess() {
        // In a process of its own without Qt Test's crash handler (sigbus_probe.cpp): with the
        // guard installed, a mapping it does not watch, read past a truncated end, still
        // dies of SIGBUS; the watched one in the same process reads zeros.
        QCOMPARE(probe("watched"), 0);
        QCOMPARE(probe("unwatched"), -SIGBUS);
    }
#endif
};

QTEST_APPLESS_MAIN(TestFileMapping)
#include "tst_file_mapping.moc"
