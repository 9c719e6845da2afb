// The source_unavailable event (docs/schema.md "events.jsonl": `source`,
// `message`): a source's Notice, said once. This file alone knows its keys:
// the sampler and the session write its keys through NoticeFields, the status
// line reads it back with NoticeOfEvent.
//
// Thread-safe: pure functions.
#pragma once

#include <optional>

#include "core/event.h"
#include "core/source.h"

namespace tv {

// The event's keys: source, message.
nlohmann::ordered_json NoticeFields(const Notice& notice);

// The notice a source_unavailable event holds (a key that is absent or not a
// string: empty); none for an event of another type.
std::optional<Notice> NoticeOfEvent(const Event& event);

}  // namespace tv
