#include "kv/disk_tier.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <list>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "common/file_lock.h"
#include "common/log.h"
#include "common/sha256.h"

namespace hearth::kv {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
using Bytes = std::vector<std::byte>;

constexpr auto kRetryAfter = std::chrono::seconds(60);  // after writing down failed
constexpr auto kDrainOnExit = std::chrono::seconds(5);  // queued writes at shutdown
constexpr const char* kSuffix = ".kvb";

std::string hex16(const std::array<uint8_t, 16>& b) {
    BlockHash h;
    h.bytes = b;
    return h.hex();
}

std::optional<BlockHash> parse_hex(std::string_view s) {
    if (s.size() != 32) return std::nullopt;
    BlockHash h;
    for (std::size_t i = 0; i < 16; ++i) {
        int v = 0;
        for (std::size_t j = 0; j < 2; ++j) {
            const char c = s[2 * i + j];
            int d = -1;
            if (c >= '0' && c <= '9') d = c - '0';
            if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
            if (d < 0) return std::nullopt;
            v = v * 16 + d;
        }
        h.bytes[i] = static_cast<uint8_t>(v);
    }
    return h;
}

bool ends_with(const std::string& s, std::string_view tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

struct Entry {
    fs::path path;
    uint64_t bytes = 0;
    std::optional<BlockHash> mine;  // set for this tier key's entries
};
using Lru = std::list<Entry>;  // least recently used first

}  // namespace

TierKey TierKey::make(const Parts& p) {
    TierKey k;
    k.text = "format=" + std::to_string(kBlockFileVersion) + "\nmodel=" + p.model +
             "\nnumerics=" + p.numerics + "\nlayers=" + std::to_string(p.n_layers) +
             "\nkv_heads=" + std::to_string(p.n_kv_heads) +
             "\nhead_dim=" + std::to_string(p.head_dim) +
             "\nblock_size=" + std::to_string(p.block_size) + "\ndtype=" + p.dtype + "\n";
    Sha256 sha;
    sha.update(k.text.data(), k.text.size());
    const auto digest = sha.finish();
    std::copy_n(digest.begin(), k.id.size(), k.id.begin());
    return k;
}

std::string TierKey::hex() const {
    return hex16(id);
}

struct DiskTier::Impl {
    DiskTierConfig config;
    TierKey key;
    std::size_t block_bytes = 0;
    fs::path root, folder;
    std::unique_ptr<FileLock> lock;

    mutable std::mutex mu;
    std::condition_variable work_cv, done_cv;
    Lru lru;
    std::unordered_map<BlockHash, Lru::iterator> mine;
    uint64_t disk_bytes = 0;
    struct Write {
        BlockHash hash;
        std::shared_ptr<const Bytes> bytes;
    };
    std::deque<Write> writes;
    std::unordered_map<BlockHash, std::shared_ptr<const Bytes>> pending;
    uint64_t pending_bytes = 0;
    struct Read {
        uint64_t job;
        std::vector<BlockHash> hashes;
        LoadSink sink;
    };
    std::deque<Read> reads;
    std::vector<LoadedBlocks> loaded;
    uint64_t next_job = 1;
    uint64_t reading = 0;  // the job the worker reads now
    bool busy = false;
    bool stop = false;
    Clock::time_point drain_until;
    std::string status;
    Clock::time_point retry_at;
    DiskTierStats counters;
    std::function<void()> on_loaded;
    std::thread worker;

    uint64_t file_bytes() const { return kBlockFileHeaderBytes + block_bytes; }

    // Deletes least recently used files until the budget holds. Under mu.
    void evict_over_budget() {
        while (disk_bytes > config.budget_bytes && !lru.empty()) {
            Entry& e = lru.front();
            std::error_code ec;
            fs::remove(e.path, ec);
            disk_bytes -= std::min(disk_bytes, e.bytes);
            if (e.mine) mine.erase(*e.mine);
            lru.pop_front();
            ++counters.evicted_blocks;
        }
    }

    // Drops every queued write. Under mu.
    void drop_writes() {
        counters.dropped_writes += static_cast<int64_t>(writes.size());
        writes.clear();
        pending.clear();
        pending_bytes = 0;
    }

    void forget(const BlockHash& hash) {  // under mu
        const auto it = mine.find(hash);
        if (it == mine.end()) return;
        disk_bytes -= std::min(disk_bytes, it->second->bytes);
        lru.erase(it->second);
        mine.erase(it);
    }

    void run() {
        std::unique_lock lk(mu);
        for (;;) {
            work_cv.wait(lk, [&] { return stop || !reads.empty() || !writes.empty(); });
            if (stop) {
                reads.clear();
                if (writes.empty()) break;
                if (Clock::now() > drain_until) {
                    log::get("kv")->info("{} KV blocks were not written down at shutdown",
                                         writes.size());
                    drop_writes();
                    break;
                }
            }
            busy = true;
            if (!reads.empty()) {
                Read r = std::move(reads.front());
                reads.pop_front();
                reading = r.job;
                lk.unlock();
                const auto t0 = Clock::now();
                LoadedBlocks out = read_blocks(r);
                log::get("kv")->debug(
                    "read {} of {} blocks in {:.1f} ms", out.loaded, r.hashes.size(),
                    std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
                lk.lock();
                loaded.push_back(std::move(out));
                reading = 0;
                busy = false;
                auto callback = on_loaded;
                lk.unlock();
                if (callback) callback();
                done_cv.notify_all();
                lk.lock();
                continue;
            }
            Write w = std::move(writes.front());
            writes.pop_front();
            lk.unlock();
            const fs::path path = folder / (w.hash.hex() + kSuffix);
            std::array<std::byte, kBlockFileHeaderBytes> header{};
            write_block_header(header, key.id, w.hash, *w.bytes);
            const std::string error = write_file(path, {header, *w.bytes});
            lk.lock();
            busy = false;
            if (pending.erase(w.hash)) pending_bytes -= std::min(pending_bytes, w.bytes->size());
            if (!error.empty()) {
                ++counters.write_errors;
                status = "not writing KV blocks down: " + error;
                retry_at = Clock::now() + kRetryAfter;
                log::get("kv")->warn("{}; inference goes on, retrying in {} s", status,
                                     kRetryAfter.count());
                drop_writes();
            } else if (!mine.contains(w.hash)) {
                lru.push_back(Entry{path, file_bytes(), w.hash});
                mine.emplace(w.hash, std::prev(lru.end()));
                disk_bytes += file_bytes();
                ++counters.written_blocks;
                counters.written_bytes += static_cast<int64_t>(file_bytes());
                evict_over_budget();
            }
            done_cv.notify_all();
        }
        busy = false;
        done_cv.notify_all();
    }

    LoadedBlocks read_blocks(const Read& r) {
        LoadedBlocks out;
        out.job = r.job;
        for (std::size_t i = 0; i < r.hashes.size(); ++i) {
            const BlockHash& hash = r.hashes[i];
            Bytes buffer;
            std::vector<std::span<std::byte>> dest;
            if (r.sink) {
                dest = r.sink(i);
            } else {
                buffer.resize(block_bytes);
                dest.push_back(buffer);
            }
            fs::path path;
            {
                std::lock_guard lk(mu);
                if (auto p = pending.find(hash); p != pending.end()) {
                    const std::byte* from = p->second->data();  // queued, not written yet
                    for (std::span<std::byte> d : dest) {
                        std::memcpy(d.data(), from, d.size());
                        from += d.size();
                    }
                    ++out.loaded;
                    if (!r.sink) out.blocks.push_back(std::move(buffer));
                    continue;
                }
                const auto it = mine.find(hash);
                if (it == mine.end()) break;  // evicted since it was asked for
                path = it->second->path;
            }
            const auto check = read_into(path, key.id, hash, block_bytes, dest);
            std::lock_guard lk(mu);
            if (check != BlockFileCheck::Ok) {
                std::error_code ec;
                if (check) {
                    ++counters.bad_files;
                    log::get("kv")->warn(
                        "KV block file {} failed its check ({}): deleted, computing it instead",
                        path.string(), describe(*check));
                    fs::remove(path, ec);
                } else {
                    log::get("kv")->warn("KV block file {} cannot be read: computing it instead",
                                         path.string());
                }
                forget(hash);
                break;
            }
            std::error_code ec;
            fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // for LRU
            if (const auto it = mine.find(hash); it != mine.end())
                lru.splice(lru.end(), lru, it->second);
            ++out.loaded;
            if (!r.sink) out.blocks.push_back(std::move(buffer));
            ++counters.loaded_blocks;
            counters.loaded_bytes += static_cast<int64_t>(file_bytes());
        }
        return out;
    }

    void index() {
        struct Found {
            fs::file_time_type time;
            Entry entry;
        };
        std::vector<Found> found;
        std::error_code ec;
        for (const auto& dir : fs::directory_iterator(root, ec)) {
            if (!dir.is_directory(ec)) continue;
            const bool ours = dir.path().filename() == folder.filename();
            for (const auto& f : fs::directory_iterator(dir.path(), ec)) {
                const std::string name = f.path().filename().string();
                if (ends_with(name, ".tmp")) {  // a write the last run did not finish
                    fs::remove(f.path(), ec);
                    continue;
                }
                if (!ends_with(name, kSuffix)) continue;
                Found x{f.last_write_time(ec), Entry{f.path(), f.file_size(ec), std::nullopt}};
                if (ec) continue;
                if (ours) x.entry.mine = parse_hex(name.substr(0, name.size() - 4));
                found.push_back(std::move(x));
            }
        }
        std::sort(found.begin(), found.end(),
                  [](const Found& a, const Found& b) { return a.time < b.time; });
        for (Found& f : found) {
            disk_bytes += f.entry.bytes;
            lru.push_back(std::move(f.entry));
            if (lru.back().mine) mine[*lru.back().mine] = std::prev(lru.end());
        }
        evict_over_budget();
    }
};

Result<std::unique_ptr<DiskTier>> DiskTier::open(const DiskTierConfig& config, const TierKey& key,
                                                 std::size_t block_bytes) {
    auto impl = std::make_unique<Impl>();
    impl->config = config;
    impl->key = key;
    impl->block_bytes = block_bytes;
    impl->root = fs::path(config.dir);
    impl->folder = impl->root / key.hex();
    std::error_code ec;
    fs::create_directories(impl->folder, ec);
    if (ec)
        return make_error("cannot create the KV cache folder " + impl->folder.string() + ": " +
                          ec.message());
    auto lock = FileLock::try_acquire(impl->root / "lock");
    if (!lock) return lock.error();
    impl->lock = std::move(lock).value();
    const fs::path described = impl->folder / "key.txt";
    if (!fs::exists(described, ec)) {
        const std::string error =
            write_file(described, {std::as_bytes(std::span(key.text.data(), key.text.size()))});
        if (!error.empty()) {
            impl->status = "the KV cache folder cannot be written: " + error;
            impl->retry_at = Clock::now() + kRetryAfter;
            log::get("kv")->warn("{}", impl->status);
        }
    }
    try {
        impl->index();
    } catch (const fs::filesystem_error& e) {
        return make_error("cannot read the KV cache folder " + config.dir + ": " + e.what());
    }
    impl->counters.dir = config.dir;
    Impl* raw = impl.get();
    impl->worker = std::thread([raw] { raw->run(); });
    log::get("kv")->info(
        "KV disk tier at {}: {} blocks ({} MiB) of this model, {} MiB of {} MiB "
        "in use",
        config.dir, impl->mine.size(), impl->mine.size() * impl->file_bytes() >> 20,
        impl->disk_bytes >> 20, config.budget_bytes >> 20);
    return std::unique_ptr<DiskTier>(new DiskTier(std::move(impl)));
}

DiskTier::DiskTier(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

DiskTier::~DiskTier() {
    {
        std::lock_guard lk(impl_->mu);
        impl_->stop = true;
        impl_->drain_until = Clock::now() + kDrainOnExit;
    }
    impl_->work_cv.notify_all();
    impl_->worker.join();
}

const TierKey& DiskTier::key() const {
    return impl_->key;
}
std::size_t DiskTier::block_bytes() const {
    return impl_->block_bytes;
}

bool DiskTier::contains(const BlockHash& hash) const {
    std::lock_guard lk(impl_->mu);
    return impl_->mine.contains(hash) || impl_->pending.contains(hash);
}

bool DiskTier::store(const BlockHash& hash, std::vector<std::byte> bytes) {
    Impl& m = *impl_;
    std::lock_guard lk(m.mu);
    if (bytes.size() != m.block_bytes || m.mine.contains(hash) || m.pending.contains(hash))
        return false;
    if (!m.status.empty()) {
        if (Clock::now() < m.retry_at) {
            ++m.counters.dropped_writes;
            return false;
        }
        m.status.clear();  // try again
    }
    if (m.file_bytes() > m.config.budget_bytes ||
        m.pending_bytes + bytes.size() > m.config.max_pending_bytes) {
        ++m.counters.dropped_writes;
        return false;
    }
    auto shared = std::make_shared<const Bytes>(std::move(bytes));
    m.pending_bytes += shared->size();
    m.pending.emplace(hash, shared);
    m.writes.push_back({hash, std::move(shared)});
    m.work_cv.notify_one();
    return true;
}

uint64_t DiskTier::load(std::vector<BlockHash> hashes, LoadSink sink) {
    std::lock_guard lk(impl_->mu);
    const uint64_t job = impl_->next_job++;
    impl_->reads.push_back({job, std::move(hashes), std::move(sink)});
    impl_->work_cv.notify_one();
    return job;
}

void DiskTier::cancel_load(uint64_t job) {
    Impl& m = *impl_;
    std::unique_lock lk(m.mu);
    std::erase_if(m.reads, [&](const Impl::Read& r) { return r.job == job; });
    m.done_cv.wait(lk, [&] { return m.reading != job; });
    std::erase_if(m.loaded, [&](const LoadedBlocks& l) { return l.job == job; });
}

std::vector<LoadedBlocks> DiskTier::take_loaded() {
    std::lock_guard lk(impl_->mu);
    std::vector<LoadedBlocks> out;
    out.swap(impl_->loaded);
    return out;
}

void DiskTier::set_on_loaded(std::function<void()> callback) {
    std::lock_guard lk(impl_->mu);
    impl_->on_loaded = std::move(callback);
}

void DiskTier::flush() {
    std::unique_lock lk(impl_->mu);
    impl_->done_cv.wait(
        lk, [&] { return impl_->writes.empty() && impl_->reads.empty() && !impl_->busy; });
}

int64_t DiskTier::erase(std::span<const BlockHash> hashes) {
    Impl& m = *impl_;
    std::unique_lock lk(m.mu);
    m.done_cv.wait(lk, [&] { return !m.busy; });  // a write of one of them lands first
    int64_t erased = 0;
    for (const BlockHash& h : hashes) {
        if (m.pending.erase(h)) {
            std::erase_if(m.writes, [&](const Impl::Write& w) {
                if (!(w.hash == h)) return false;
                m.pending_bytes -= std::min(m.pending_bytes, w.bytes->size());
                return true;
            });
            ++erased;
        }
        const auto it = m.mine.find(h);
        if (it == m.mine.end()) continue;
        std::error_code ec;
        fs::remove(it->second->path, ec);
        m.forget(h);
        ++erased;
    }
    return erased;
}

void DiskTier::clear() {
    Impl& m = *impl_;
    std::unique_lock lk(m.mu);
    m.drop_writes();
    m.done_cv.wait(lk, [&] { return !m.busy; });  // a write in flight lands first
    std::error_code ec;
    for (const Entry& e : m.lru) fs::remove(e.path, ec);
    m.lru.clear();
    m.mine.clear();
    m.disk_bytes = 0;
    log::get("kv")->info("KV disk tier at {} cleared", m.config.dir);
}

namespace {

// Whether a tier folder's key.txt names this model.
bool folder_of_model(const fs::path& folder, const std::string& model_fingerprint) {
    const auto text = read_file(folder / "key.txt");
    if (!text || model_fingerprint.empty()) return false;
    const std::string key(reinterpret_cast<const char*>(text->data()), text->size());
    return key.find("\nmodel=" + model_fingerprint + "\n") != std::string::npos;
}

}  // namespace

int64_t DiskTier::erase_model(const std::string& model_fingerprint) {
    Impl& m = *impl_;
    std::unique_lock lk(m.mu);
    m.done_cv.wait(lk, [&] { return !m.busy; });  // a write in flight lands first
    std::map<fs::path, bool> theirs;              // folder → of that model
    int64_t removed = 0;
    for (auto it = m.lru.begin(); it != m.lru.end();) {
        const fs::path folder = it->path.parent_path();
        if (it->mine || folder == m.folder) {
            ++it;
            continue;
        }
        auto known = theirs.find(folder);
        if (known == theirs.end())
            known = theirs.emplace(folder, folder_of_model(folder, model_fingerprint)).first;
        if (!known->second) {
            ++it;
            continue;
        }
        std::error_code ec;
        fs::remove(it->path, ec);
        m.disk_bytes -= std::min(m.disk_bytes, it->bytes);
        it = m.lru.erase(it);
        ++removed;
    }
    for (const auto& [folder, of_model] : theirs)
        if (of_model) {
            std::error_code ec;
            fs::remove_all(folder, ec);
        }
    if (removed > 0)
        log::get("kv")->info("KV disk tier: {} blocks of a deleted model removed", removed);
    return removed;
}

Result<int64_t> erase_model_from_disk_tier(const std::string& dir,
                                           const std::string& model_fingerprint) {
    std::error_code ec;
    if (!fs::exists(dir, ec)) return int64_t{0};
    auto lock = FileLock::try_acquire(fs::path(dir) / "lock");
    if (!lock) return make_error(lock.message());
    int64_t removed = 0;
    for (const auto& d : fs::directory_iterator(dir, ec)) {
        if (!d.is_directory(ec) || !folder_of_model(d.path(), model_fingerprint)) continue;
        for (const auto& f : fs::directory_iterator(d.path(), ec))
            if (ends_with(f.path().filename().string(), kSuffix)) ++removed;
        fs::remove_all(d.path(), ec);
        if (ec) return make_error("cannot delete " + d.path().string() + ": " + ec.message());
    }
    return removed;
}

DiskTierStats DiskTier::stats() const {
    const Impl& m = *impl_;
    std::lock_guard lk(m.mu);
    DiskTierStats s = m.counters;
    s.status = m.status;
    s.entries = static_cast<int64_t>(m.lru.size());
    s.bytes = static_cast<int64_t>(m.disk_bytes);
    s.budget_bytes = static_cast<int64_t>(m.config.budget_bytes);
    s.model_entries = static_cast<int64_t>(m.mine.size());
    s.pending_writes = static_cast<int64_t>(m.writes.size());
    return s;
}

Result<std::vector<TierFolder>> inspect_disk_tier(const std::string& dir) {
    std::vector<TierFolder> out;
    std::error_code ec;
    if (!fs::exists(dir, ec)) return out;
    for (const auto& d : fs::directory_iterator(dir, ec)) {
        if (!d.is_directory(ec)) continue;
        TierFolder t;
        t.id = d.path().filename().string();
        if (auto text = read_file(d.path() / "key.txt"))
            t.description.assign(reinterpret_cast<const char*>(text->data()), text->size());
        for (const auto& f : fs::directory_iterator(d.path(), ec)) {
            if (!ends_with(f.path().filename().string(), kSuffix)) continue;
            ++t.entries;
            t.bytes += static_cast<int64_t>(f.file_size(ec));
        }
        out.push_back(std::move(t));
    }
    if (ec) return make_error("cannot read the KV cache folder " + dir + ": " + ec.message());
    return out;
}

Result<int64_t> clear_disk_tier(const std::string& dir) {
    std::error_code ec;
    if (!fs::exists(dir, ec)) return int64_t{0};
    auto lock = FileLock::try_acquire(fs::path(dir) / "lock");
    if (!lock) return make_error(lock.message() + "; clear the cache from its Settings instead");
    int64_t removed = 0;
    for (const auto& d : fs::directory_iterator(dir, ec)) {
        if (!d.is_directory(ec)) continue;
        for (const auto& f : fs::directory_iterator(d.path(), ec))
            if (ends_with(f.path().filename().string(), kSuffix)) ++removed;
        fs::remove_all(d.path(), ec);
        if (ec) return make_error("cannot delete " + d.path().string() + ": " + ec.message());
    }
    return removed;
}

}  // namespace hearth::kv
