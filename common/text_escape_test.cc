// Strings from a trace or a profile, written by each format's rule: nothing that acts on a
// terminal, nothing that is not UTF-8, nothing that ends an XML element.
#include "common/text_escape.h"

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace clpool::common {
namespace {

TEST(TextEscape, WellFormedNamesAreUnchanged) {
  for (const std::string s : {"Cache.grow (app.py:42)", "grüße_ß (/src/my app/café.py:1)", "日本語",
                              "a\\b", "", "emoji \xF0\x9F\x98\x80"}) {
    EXPECT_EQ(escape_text(s), s);
    EXPECT_EQ(json_text(s), s);
    EXPECT_TRUE(is_printable_text(s)) << s;
  }
}

// An ESC/OSC sequence, newlines and a NUL from a frame name were printed raw in the report.
TEST(TextEscape, ControlCharactersAreEscaped) {
  EXPECT_EQ(escape_text("\x1b]0;pwned\x07name"), "\\x1B]0;pwned\\x07name");
  EXPECT_EQ(escape_text(std::string("a\nb\r\tc\0d\x7f", 9)), "a\\x0Ab\\x0D\\x09c\\x00d\\x7F");
  EXPECT_EQ(escape_text("\xC2\x9B"
                        "31m"),
            "\\x9B31m");  // C1 CSI, UTF-8 encoded
  EXPECT_EQ(escape_text("abc\xE2\x80\xAE"
                        "cba"),
            "abc\\u202Ecba");  // right-to-left override
  EXPECT_FALSE(is_printable_text("a\nb"));
}

// A frame name that is not UTF-8 made --json fail (json.exception.type_error.316).
TEST(TextEscape, BytesThatAreNotUtf8AreEscaped) {
  EXPECT_EQ(escape_text("caf\xE9"), "caf\\xE9");
  EXPECT_EQ(escape_text("\xC0\xAF"), "\\xC0\\xAF");           // overlong '/'
  EXPECT_EQ(escape_text("\xED\xA0\x80"), "\\xED\\xA0\\x80");  // a surrogate
  EXPECT_EQ(escape_text("\xE2\x82"), "\\xE2\\x82");           // cut short
  EXPECT_EQ(escape_text("\xF5\x80\x80\x80"), "\\xF5\\x80\\x80\\x80");
  EXPECT_FALSE(is_printable_text("caf\xE9"));
  // Every byte value alone: the result is printable UTF-8.
  for (int b = 0; b < 256; ++b) {
    const std::string one(1, static_cast<char>(b));
    EXPECT_TRUE(is_printable_text(escape_text(one))) << b;
  }
}

TEST(TextEscape, XmlGetsEntitiesAfterTheTextRule) {
  EXPECT_EQ(escape_xml("<script>&\"'\x1b</script>"),
            "&lt;script&gt;&amp;&quot;&#39;\\x1B&lt;/script&gt;");
  EXPECT_EQ(escape_xml("caf\xE9 \xE2\x82\xAC"), "caf\\xE9 \xE2\x82\xAC");
}

TEST(FileNameFor, DistinctTextsGiveDistinctNames) {
  const std::vector<std::string> ids = {"t.py::test[a b]",
                                        "t.py::test[a:b]",
                                        "t.py::test[a/b]",
                                        "t.py::test[a_b]",
                                        "t.py::test[a%20b]",
                                        "t.py::test[a%2Fb]",
                                        ".",
                                        "..",
                                        "",
                                        "%",
                                        "t.py::test[\x1b[31m]",
                                        "t.py::test[\xC3\xA9]"};
  std::set<std::string> names;
  for (const std::string& id : ids) {
    const std::string n = file_name_for(id);
    EXPECT_TRUE(names.insert(n).second) << id << " -> " << n;
    EXPECT_NE(n, ".");
    EXPECT_NE(n, "..");
    EXPECT_FALSE(n.empty());
    EXPECT_EQ(n.find('/'), std::string::npos) << n;
    for (const char c : n) EXPECT_TRUE(c > ' ' && c < 0x7f) << n;
  }
  EXPECT_EQ(file_name_for("test_suite.py::test_peak_above"), "test_suite.py%3A%3Atest_peak_above");
  EXPECT_EQ(file_name_for(".hidden"), "%2Ehidden");
}

TEST(FileNameFor, LongIdsSharingAPrefixStayDistinct) {
  const std::string prefix = "t.py::test_long[" + std::string(200, 'x');
  std::set<std::string> names;
  for (int i = 0; i < 1000; ++i) {
    const std::string n = file_name_for(prefix + std::to_string(i) + "]");
    EXPECT_LE(n.size(), 120u);
    EXPECT_NE(n.find('~'), std::string::npos);
    EXPECT_TRUE(names.insert(n).second) << n;
  }
  // A cut never splits an escape: the part before '~' decodes.
  const std::string n = file_name_for(std::string(150, ':'), 40);
  EXPECT_LE(n.size(), 40u);
  const std::string head = n.substr(0, n.find('~'));
  EXPECT_EQ(head.size() % 3, 0u) << n;
  EXPECT_EQ(file_name_for(std::string(150, ':'), 40), n);  // the same every time
}

}  // namespace
}  // namespace clpool::common
