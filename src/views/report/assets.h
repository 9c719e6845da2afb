// The files a report page carries inline, embedded into the binary at build
// time (cmake/embed_assets.cmake): the vendored uPlot release
// (third_party/uplot/) and the page's own script and style beside this header.
// Each returns the file's bytes; they live as long as the program.
#pragma once

#include <string_view>

namespace tv {

std::string_view UplotJs();
std::string_view UplotCss();
std::string_view ReportJs();
std::string_view ReportCss();

}  // namespace tv
