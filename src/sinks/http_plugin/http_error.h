// Plain words for a failed HTTP request of cpp-httplib, whose own names are
// bare enum names ("Connection"): the whole reason, as a person reads it.
#pragma once

#include <httplib.h>

#include <string>

namespace tv {

// "cannot connect to 127.0.0.1:9091: Connection refused",
// "no reply from host:9091 (read failed)", ... For a connection that failed,
// the reason is found by connecting once more (1 s at most), since httplib
// keeps no errno: call it off the sampler thread.
std::string DescribeHttpError(httplib::Error error, const std::string& host, int port);

}  // namespace tv
