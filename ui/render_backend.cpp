#include "render_backend.h"

#include <QGuiApplication>
#include <QQuickWindow>
#include <QSGRendererInterface>

#if QT_CONFIG(opengl)
#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QOpenGLFunctions>
#endif

namespace hearth::ui {

bool is_software_gl_renderer(const QString& gl_renderer) {
    const QString r = gl_renderer.toLower();
    for (const char* s : {"llvmpipe", "softpipe", "swrast", "software rasterizer", "swiftshader",
                          "basic render driver", "gdi generic"})
        if (r.contains(QLatin1String(s))) return true;
    return false;
}

namespace {

RenderBackend use_software(const QString& reason) {
    QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
    return {true, reason};
}

}  // namespace

RenderBackend choose_render_backend() {
    const QString forced = qEnvironmentVariable("HEARTH_RENDERER").toLower();
    if (forced == QLatin1String("software"))
        return use_software(QStringLiteral("HEARTH_RENDERER=software"));
    if (forced == QLatin1String("gpu")) return {false, QStringLiteral("HEARTH_RENDERER=gpu")};
    if (qEnvironmentVariableIsSet("QT_QUICK_BACKEND") ||
        qEnvironmentVariableIsSet("QSG_RHI_BACKEND"))
        return {false, QStringLiteral("set by QT_QUICK_BACKEND / QSG_RHI_BACKEND")};
    const QString platform = QGuiApplication::platformName();
    if (platform == QLatin1String("offscreen") || platform == QLatin1String("minimal"))
        return use_software(QStringLiteral("no display (%1)").arg(platform));
#if QT_CONFIG(opengl) && !defined(Q_OS_WIN) && !defined(Q_OS_MACOS)
    // Windows and macOS render through Direct3D and Metal, not OpenGL; asking OpenGL
    // there would say nothing about them.
    QOpenGLContext context;
    if (!context.create())
        return use_software(QStringLiteral("no OpenGL context could be created"));
    QOffscreenSurface surface;
    surface.setFormat(context.format());
    surface.create();
    if (!context.makeCurrent(&surface))
        return use_software(QStringLiteral("OpenGL could not be used"));
    const auto* raw = reinterpret_cast<const char*>(context.functions()->glGetString(GL_RENDERER));
    const QString renderer = QString::fromLatin1(raw ? raw : "");
    context.doneCurrent();
    if (is_software_gl_renderer(renderer))
        return use_software(QStringLiteral("OpenGL is a software rasteriser (%1)").arg(renderer));
    return {false, QStringLiteral("OpenGL on %1").arg(renderer)};
#else
    return {false, QStringLiteral("the platform's default")};
#endif
}

}  // namespace hearth::ui
