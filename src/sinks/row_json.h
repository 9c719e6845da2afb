// The JSON form of a Row: one line of samples.jsonl (schema in docs/schema.md).
// Keys come from the metric table: a gauge writes its interval mean under its
// name and, when the table says so, its max under <name>_max; a counter writes
// its last value. Absent values are left out, never written as 0.
#pragma once

#include <string>

#include "core/row.h"

namespace tv {

// Appends the row as one JSON object (no newline) to `out`.
void AppendRowJson(const Row& row, std::string* out);

// A number as JSON: whole numbers for bytes and counts, otherwise at most four
// decimals in the shortest form.
void AppendJsonNumber(double v, bool integral, std::string* out);

}  // namespace tv
