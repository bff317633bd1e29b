// Which Qt Quick scene-graph backend the window renders with.
//
// Qt Quick renders through OpenGL (Linux) by default. Where OpenGL is a software
// rasteriser (Mesa's llvmpipe or softpipe: a VM, a remote desktop, a machine without a
// GPU driver), every frame is rasterised in full on the CPU by several threads, which on
// a small machine takes the cores that inference needs (measured: 1.4 of 2 cores while a
// reply was prefilled, and a first token 5x later than in the CLI). Qt Quick's own
// software renderer redraws only what changed, so there it is chosen instead.
#pragma once

#include <QString>

namespace hearth::ui {

struct RenderBackend {
    bool software = false;  // Qt Quick's software renderer was chosen
    QString reason;         // for the log and the About page
};

// Call after the QGuiApplication exists and before the first window. Respects the user's
// choice: QT_QUICK_BACKEND / QSG_RHI_BACKEND, or HEARTH_RENDERER=software|gpu.
RenderBackend choose_render_backend();

// True for the renderer string of an OpenGL implementation that rasterises on the CPU.
bool is_software_gl_renderer(const QString& gl_renderer);

}  // namespace hearth::ui
