// The words for a fit estimate (engine/fit_estimate.h), shared by the list of models on
// this computer and the catalog: a verdict ("fits", "tight", "too-big"), the line under a
// model, and the arithmetic behind it, one click away.
#pragma once

#include <QVariantMap>

#include "fit_estimate.h"

namespace hearth::app {

// {fit, text, detail, bytes, tokensPerSecond}.
QVariantMap fit_map(const FitEstimate& e, const MachineFacts& machine);

}  // namespace hearth::app
