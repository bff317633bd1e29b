#include "models/model_scan.h"

#include <QFileInfo>
#include <QSet>

#include "chat/reasoning.h"
#include "gguf/gguf_file.h"
#include "model/model_name.h"
#include "models/model_sources.h"

namespace hearth::models {
namespace {

SourceScan scan_root(const SourceRoot& root) {
    switch (root.source) {
        case Source::Hearth:
        case Source::Folder:
            return scan_folder(root.path, root.source);
        case Source::Ollama:
            return scan_ollama(root.path);
        case Source::LmStudio:
            return scan_lmstudio(root.path);
        case Source::Gpt4All:
            return scan_gpt4all(root.path);
        case Source::Jan:
            return scan_jan(root.path);
        case Source::LlamaCpp:
            return scan_llamacpp(root.path);
        case Source::HuggingFace:
            return scan_hf_cache(root.path);
    }
    return {};
}

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

}  // namespace

LibraryScan scan_roots(const QList<SourceRoot>& roots) {
    LibraryScan out;
    QSet<QString> seen_roots, seen_files;
    for (const SourceRoot& root : roots) {
        const QString canonical_root = QFileInfo(root.path).canonicalFilePath();
        const QString root_key = source_id(root.source) + QLatin1Char('|') +
                                 (canonical_root.isEmpty() ? root.path : canonical_root);
        if (seen_roots.contains(root_key)) continue;  // two settings naming one folder
        seen_roots.insert(root_key);
        SourceScan scan = scan_root(root);
        QList<FoundModel> kept;
        for (const FoundModel& m : scan.models) {
            const QString canonical = QFileInfo(m.path).canonicalFilePath();
            const QString key = canonical.isEmpty() ? m.path : canonical;
            if (seen_files.contains(key)) continue;
            seen_files.insert(key);
            kept << m;
        }
        scan.models = kept;
        out.models << kept;
        out.sources << scan;
    }
    return out;
}

ModelFacts read_facts(const FoundModel& model) {
    ModelFacts f;
    auto file = gguf::GgufFile::open(model.path.toStdString());
    if (!file) {
        f.why_not = qs(file.message());
        return f;
    }
    const gguf::GgufFile& g = **file;
    f.title = qs(readable_model_name(g, model.path.toStdString()));
    f.architecture = qs(std::string(g.get_string("general.architecture").value_or("")));
    f.quantisation = qs(quantisation_label(g));
    for (const auto& t : g.tensors()) f.parameters += t.n_elements();
    f.thinking_switch =
        chat::detect_reasoning(g.get_string("tokenizer.chat_template").value_or("")).switchable;
    // model_needs reads the config once: the reason it cannot run, or what it needs.
    auto needs = model_needs(g);
    if (!needs) {
        f.why_not = qs(needs.message());
        return f;
    }
    f.context_length = needs->context_length;
    f.needs = *needs;  // a split model's: GgufFile::open read every part
    f.supported = true;
    return f;
}

}  // namespace hearth::models
