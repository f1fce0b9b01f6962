// Private to the command language's files (commands.cpp parses and prints, commands_apply.cpp
// applies): the helpers both use. No caller outside them needs these.
#pragma once

#include <string>
#include <string_view>

namespace tilescope::core {

// `s` without leading and trailing blanks (space, tab, CR).
std::string_view trim(std::string_view s);

// "" or why a resize to w x h is refused (parse time for scripts, apply time for the rest).
std::string check_window_size(double w, double h);

}  // namespace tilescope::core
