// The device choice (engine/device.h): parsing the user's setting, and every way "auto"
// ends on the CPU (no driver, no device, not enough memory, an architecture this build
// has no kernels for, no CUDA inference in this build) or on a GPU, on inventories made
// up here; and, on this machine, that asking the real driver never fails or crashes.
#include <QTest>

#include <algorithm>

#include "device.h"
#include "vram_plan.h"

using namespace hearth;

namespace {

constexpr std::uint64_t kGiB = 1024ull * 1024 * 1024;

GpuDevice gpu(int index, std::uint64_t free_gib, bool kernels = true, std::string problem = {}) {
    GpuDevice g;
    g.index = index;
    g.name = "Test GPU " + std::to_string(index);
    g.cc_major = 9;
    g.cc_minor = 0;
    g.total_bytes = 80 * kGiB;
    g.free_bytes = free_gib * kGiB;
    g.runs_our_kernels = kernels;
    g.problem = std::move(problem);
    return g;
}

GpuInventory inventory(std::vector<GpuDevice> devices, std::string problem = {}) {
    GpuInventory inv;
    inv.cuda_built = true;
    inv.devices = std::move(devices);
    inv.problem = std::move(problem);
    return inv;
}

DeviceRequest request(const char* text) {
    auto r = parse_device(text);
    if (!r) qFatal("%s", r.message().c_str());
    return *r;
}

}  // namespace

class TestDevice : public QObject {
    Q_OBJECT

  private slots:
    void parsesTheSetting() {
        for (const char* text : {"auto", "cpu", "cuda", "cuda:0", "cuda:3"}) {
            auto r = parse_device(text);
            QVERIFY2(r, text);
            QCOMPARE(device_request_name(*r), std::string(text));
        }
        QVERIFY(request("auto").automatic);
        QCOMPARE(request("cuda:3").index, 3);
        QCOMPARE(request("cuda").index, -1);
        for (const char* bad :
             {"", "gpu", "CUDA", "cuda:", "cuda:-1", "cuda:1x", "cuda:99999", " cpu", "cuda:0:1"}) {
            auto r = parse_device(bad);
            QVERIFY2(!r, bad);
            QVERIFY(r.message().find("expected auto, cpu, cuda or cuda:N") != std::string::npos);
        }
    }

    // The policies choose_device() is asked with.
    static CudaSupport cuda_on() { return {true, true, {}}; }
    static CudaSupport explicit_only() {
        return {true, false, "the CUDA backend has not yet been verified on a GPU"};
    }
    static CudaSupport no_cuda() { return {false, false, "this build has no CUDA backend"}; }

    void autoFallsBackToTheCpuAndSaysWhy() {
        struct Case {
            const char* name;
            GpuInventory gpus;
            CudaSupport cuda;
            const char* reason;  // a part of cpu_reason
        };
        const std::vector<Case> cases = {
            {"no driver",
             inventory({},
                       "cudaGetDeviceCount: cudaErrorInsufficientDriver (CUDA driver version "
                       "is insufficient for CUDA runtime version)"),
             cuda_on(), "cudaErrorInsufficientDriver"},
            {"no device", inventory({}, "the CUDA driver reports no devices"), cuda_on(),
             "reports no devices"},
            {"listed none", inventory({}), cuda_on(), "no CUDA device"},
            {"not built",
             [] {
                 GpuInventory inv;
                 inv.problem = "this build has no CUDA support";
                 return inv;
             }(),
             cuda_on(), "no CUDA support"},
            {"too little memory", inventory({gpu(0, 2)}), cuda_on(),
             "not enough free memory: 2.0 GiB free, 6.0 GiB needed"},
            {"architecture", inventory({gpu(0, 40, false)}), cuda_on(),
             "no kernels for its architecture"},
            {"device error", inventory({gpu(0, 40, true, "cannot use the device: busy")}),
             cuda_on(), "cannot use the device: busy"},
            {"no CUDA inference", inventory({gpu(0, 40)}), no_cuda(), "no CUDA backend"},
            // auto may not choose CUDA yet: the CPU and why, even with a device that fits.
            {"not verified", inventory({gpu(0, 40)}), explicit_only(), "not yet been verified"},
        };
        for (const Case& c : cases) {
            auto choice = choose_device(request("auto"), c.gpus, 6 * kGiB, c.cuda);
            QVERIFY2(choice, c.name);
            QVERIFY2(choice->kind == DeviceKind::Cpu, c.name);
            QCOMPARE(choice->description, std::string("cpu"));
            QVERIFY2(choice->cpu_reason.find(c.reason) != std::string::npos,
                     (std::string(c.name) + ": " + choice->cpu_reason).c_str());
        }
        // Every device's reason is given when none fits.
        auto both = choose_device(request("auto"), inventory({gpu(0, 1), gpu(1, 40, false)}),
                                  6 * kGiB, cuda_on());
        QVERIFY(both && both->kind == DeviceKind::Cpu);
        QVERIFY(both->cpu_reason.find("cuda:0") != std::string::npos);
        QVERIFY(both->cpu_reason.find("cuda:1") != std::string::npos);
    }

    void autoTakesTheFirstDeviceThatFits() {
        auto choice =
            choose_device(request("auto"), inventory({gpu(0, 2), gpu(1, 40)}), 6 * kGiB, cuda_on());
        QVERIFY(choice);
        QVERIFY(choice->kind == DeviceKind::Cuda);
        QCOMPARE(choice->index, 1);
        QVERIFY(choice->cpu_reason.empty());
        QVERIFY(choice->description.find("cuda:1 (Test GPU 1, sm_90") == 0);
    }

    void cpuIsAlwaysTheCpu() {
        auto choice = choose_device(request("cpu"), inventory({gpu(0, 40)}), 6 * kGiB, cuda_on());
        QVERIFY(choice && choice->kind == DeviceKind::Cpu && choice->cpu_reason.empty());
    }

    // An explicit CUDA choice that cannot be met is an error that says why.
    void explicitCudaIsAnErrorWhenItCannotBeMet() {
        const GpuInventory two = inventory({gpu(0, 2), gpu(1, 40)});
        auto missing = choose_device(request("cuda:5"), two, kGiB, cuda_on());
        QVERIFY(!missing);
        QVERIFY(missing.message().find("no such device (2 found)") != std::string::npos);
        auto small = choose_device(request("cuda:0"), two, 6 * kGiB, cuda_on());
        QVERIFY(!small);
        QVERIFY(small.message().find("not enough free memory") != std::string::npos);
        auto first_fit = choose_device(request("cuda"), two, 6 * kGiB, cuda_on());
        QVERIFY(first_fit && first_fit->kind == DeviceKind::Cuda && first_fit->index == 1);
        auto no_driver = choose_device(
            request("cuda"), inventory({}, "cudaGetDeviceCount: no driver"), kGiB, cuda_on());
        QVERIFY(!no_driver);
        QVERIFY(no_driver.message().find("cuda: cudaGetDeviceCount: no driver") == 0);
        auto not_built = choose_device(request("cuda:1"), two, kGiB, no_cuda());
        QVERIFY(!not_built);
        QVERIFY(not_built.message().find("cannot run inference on CUDA") != std::string::npos);
        // An explicit device is taken when auto may not choose one yet.
        auto chosen = choose_device(request("cuda:1"), two, kGiB, explicit_only());
        QVERIFY(chosen && chosen->kind == DeviceKind::Cuda && chosen->index == 1);
    }

    // VRAM planning: the KV cache gets what is left of the usable memory, in whole blocks;
    // what does not fit says so with the numbers.
    void vramPlanArithmetic() {
        constexpr std::uint64_t kMiB = 1024ull * 1024;
        VramNeeds needs;
        needs.weight_bytes = 4608 * kMiB;  // 4.5 GiB
        needs.activation_bytes = 300 * kMiB;
        needs.workspace_bytes = 200 * kMiB;  // the kernels' worst case, allocated up front
        needs.kv_bytes_per_block = 2 * kMiB;
        needs.context_blocks = 512;  // a 1 GiB context
        const VramPolicy policy;     // 90 % of free, 768 MiB reserve
        auto plan = plan_vram(24 * kGiB, needs, policy);
        QVERIFY(plan);
        const auto usable = static_cast<std::uint64_t>(24.0 * kGiB * 0.9);
        const std::uint64_t fixed =
            needs.weight_bytes + needs.activation_bytes + needs.workspace_bytes + 768 * kMiB;
        QCOMPARE(plan->kv_blocks, static_cast<std::int64_t>((usable - fixed) / (2 * kMiB)));
        QCOMPARE(plan->kv_bytes, static_cast<std::uint64_t>(plan->kv_blocks) * 2 * kMiB);
        QCOMPARE(plan->total_bytes, fixed + plan->kv_bytes);
        QVERIFY(plan->total_bytes <= usable);

        auto small = plan_vram(4 * kGiB, needs, policy);  // the weights alone do not fit
        QVERIFY(!small);
        QVERIFY2(small.message().find("before any KV cache") != std::string::npos,
                 small.message().c_str());
        auto tight = plan_vram(6 * kGiB + 512 * kMiB, needs, policy);  // no full context
        QVERIFY(!tight);
        QVERIFY2(tight.message().find("one full context") != std::string::npos,
                 tight.message().c_str());

        VramNeeds budgeted = needs;
        budgeted.kv_budget_bytes = 3 * kGiB;
        auto fixed_kv = plan_vram(24 * kGiB, budgeted, policy);
        QVERIFY(fixed_kv);
        QCOMPARE(fixed_kv->kv_blocks, std::int64_t{1536});
        budgeted.kv_budget_bytes = 40 * kGiB;
        auto too_much = plan_vram(24 * kGiB, budgeted, policy);
        QVERIFY(!too_much);
        QVERIFY(too_much.message().find("does not fit") != std::string::npos);

        VramPolicy capped = policy;
        capped.max_blocks = 1000;
        QCOMPARE(plan_vram(24 * kGiB, needs, capped)->kv_blocks, std::int64_t{1000});

        // vram_bytes_needed is the least free memory that plans: one byte less does not.
        for (const VramNeeds& n : {needs, budgeted}) {
            VramNeeds v = n;
            if (v.kv_budget_bytes > 0) v.kv_budget_bytes = 2 * kGiB;
            const std::uint64_t need = vram_bytes_needed(v, policy);
            QVERIFY(plan_vram(need, v, policy));
            QVERIFY(!plan_vram(need - 1, v, policy));
        }
    }

    // The real driver: on this machine (toolkit, no driver, no GPU) or on a GPU machine,
    // listing answers without crashing, and auto then has a reason or a device.
    void theRealDriverAnswers() {
        const GpuInventory gpus = list_gpus();
        qInfo("CUDA built: %s; %s; %zu device(s)", gpus.cuda_built ? "yes" : "no",
              gpus.problem.empty() ? "driver answered" : gpus.problem.c_str(), gpus.devices.size());
        for (const GpuDevice& g : gpus.devices)
            qInfo("  cuda:%d %s, %s%s%s", g.index, g.name.c_str(), describe_gpu(g).c_str(),
                  g.problem.empty() ? "" : ": ", g.problem.c_str());
        QVERIFY(gpus.devices.empty() != gpus.problem.empty());
        // With auto allowed to take CUDA: a device that runs our kernels is taken, and
        // otherwise the CPU comes with the driver's or the devices' reason.
        auto choice = choose_device(request("auto"), gpus, kGiB, cuda_on());
        QVERIFY(choice);
        const bool usable =
            std::any_of(gpus.devices.begin(), gpus.devices.end(), [](const GpuDevice& g) {
                return g.runs_our_kernels && g.problem.empty() && g.free_bytes > 2 * kGiB;
            });
        if (choice->kind == DeviceKind::Cpu) {
            QVERIFY(!usable);
            QVERIFY(!choice->cpu_reason.empty());
            if (gpus.devices.empty()) QCOMPARE(choice->cpu_reason, gpus.problem);
        }
        if (qEnvironmentVariableIsSet("HEARTH_REQUIRE_GPU")) QVERIFY(!gpus.devices.empty());
    }
};

QTEST_GUILESS_MAIN(TestDevice)
#include "tst_device.moc"
