// What `gb10tune report` leaves out unless --include-paths: home directories, the user's name
// and the machine's host name, wherever the saved documents hold them.
#pragma once

#include <string>
#include <string_view>

#include "gb10tune/report/report_bundle.hpp"

namespace gb10tune::report {

// Who and where the report is written: each "" when unknown.
struct Identity {
  std::string home;  // $HOME
  std::string user;  // $USER / $LOGNAME
  std::string host;  // the host name ("spark-01.lan")
};

// `text` with `identity.home` and every /home/NAME, /Users/NAME and /root directory replaced by
// "~", the host name (and its first label) by "<host>" and the user's name by "<user>" where
// each stands as a word of its own. A user named "root" or shorter than 3 characters is left
// (too common a word); so is the host "localhost".
std::string redact_text(std::string_view text, const Identity& identity);

// Every string of the bundle (documents, file names, problems) through redact_text.
void redact_bundle(ReportBundle& bundle, const Identity& identity);

}  // namespace gb10tune::report
