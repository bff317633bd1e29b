// Every model on this computer: each source root read by its reader, a file found twice
// (a link, or two apps sharing a folder) listed once under the first source, and what each
// file is, read from its GGUF header.
#pragma once

#include <QList>
#include <QString>

#include "fit_estimate.h"
#include "models/found_model.h"
#include "models/source_roots.h"

namespace hearth::models {

struct LibraryScan {
    QList<FoundModel> models;   // in the order of the roots, then by path
    QList<SourceScan> sources;  // one per root (its models, problems, whether it exists)
};

// Runs reader after reader; seconds at most for thousands of files (the readers only
// list folders and read small files), so call it off the GUI thread.
LibraryScan scan_roots(const QList<SourceRoot>& roots);

// What a GGUF header says, for the list: the engine's own reading of it.
struct ModelFacts {
    QString title;          // readable_model_name: "SmolLM2 135M Instruct"
    QString architecture;   // general.architecture
    QString quantisation;   // quantisation_label: "Q4_K_M"
    qint64 parameters = 0;  // the tensors' elements
    qint64 context_length = 0;
    bool thinking_switch = false;  // its chat template can turn reasoning off (Qwen3)
    bool supported = false;        // Hearth can run it
    QString why_not;               // when not: the engine's reason, or why the file is unreadable
    hearth::ModelNeeds needs;      // for the fit estimate, when supported
};

// Reads the header (the file is mapped, only the header pages are touched). A split
// model's first part describes it, but Hearth opens single files only.
ModelFacts read_facts(const FoundModel& model);

}  // namespace hearth::models
