package flusso.elasticsearch;

import java.io.Reader;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.FilteringTokenFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.charfilter.MappingCharFilter;
import org.apache.lucene.analysis.charfilter.NormalizeCharMap;
import org.apache.lucene.analysis.core.FlattenGraphFilter;
import org.apache.lucene.analysis.core.WhitespaceTokenizer;
import org.apache.lucene.analysis.email.UAX29URLEmailTokenizer;
import org.apache.lucene.analysis.miscellaneous.ASCIIFoldingFilter;
import org.apache.lucene.analysis.miscellaneous.RemoveDuplicatesTokenFilter;
import org.apache.lucene.analysis.miscellaneous.WordDelimiterGraphFilter;
import org.apache.lucene.analysis.miscellaneous.WordDelimiterIterator;
import org.apache.lucene.analysis.pattern.PatternCaptureGroupTokenFilter;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.index.analysis.CharFilterFactory;
import org.elasticsearch.index.analysis.NormalizingCharFilterFactory;
import org.elasticsearch.index.analysis.NormalizingTokenFilterFactory;
import org.elasticsearch.index.analysis.TokenFilterFactory;
import org.elasticsearch.index.analysis.TokenizerFactory;
import org.elasticsearch.indices.analysis.AnalysisModule.AnalysisProvider;
import org.elasticsearch.plugins.AnalysisPlugin;
import org.elasticsearch.plugins.Plugin;

/**
 * The analysis components flusso's index bodies name (src/schema/mapping.c),
 * and those of X-Pack security's own index (.security-7: its email analyzer),
 * that Elasticsearch's server lacks: a distribution has them from its
 * analysis-common module, which Elasticsearch does not publish to Maven
 * Central (there is no org.elasticsearch.plugin:analysis-common), so the
 * embedded node registers them itself, on Lucene's own classes
 * (lucene-analysis-common, which the server depends on), under the names and
 * with the settings of analysis-common:
 *
 *   tokenizer   whitespace            (max_token_length)
 *               uax_url_email         (max_token_length)           security's index
 *   char_filter mapping               (mappings: "a => b" rules)
 *   filter      asciifolding          (preserve_original)
 *               flatten_graph
 *               word_delimiter_graph  (generate_word_parts, generate_number_parts,
 *                                      catenate_words, catenate_numbers, catenate_all,
 *                                      split_on_case_change, split_on_numerics,
 *                                      preserve_original, stem_english_possessive,
 *                                      ignore_keywords, adjust_offsets, protected_words)
 *               pattern_capture       (patterns, preserve_original)  security's index
 *               unique                (only_on_same_position)        security's index
 *
 * The server has standard (tokenizer) and lowercase (filter) itself.  Other
 * settings of these components (type_table, *_path) are refused, not ignored:
 * a test that needs one should fail plainly.
 */
public final class FlussoAnalysisPlugin extends Plugin implements AnalysisPlugin {

    @Override
    public Map<String, AnalysisProvider<TokenizerFactory>> getTokenizers() {
        return Map.of("whitespace", (index, env, name, settings) -> {
            check(name, settings, Set.of("max_token_length"));
            int max = settings.getAsInt("max_token_length", 255);
            return TokenizerFactory.newFactory(name, () -> new WhitespaceTokenizer(TokenStream.DEFAULT_TOKEN_ATTRIBUTE_FACTORY, max));
        }, "uax_url_email", (index, env, name, settings) -> {
            check(name, settings, Set.of("max_token_length"));
            int max = settings.getAsInt("max_token_length", 255);
            return TokenizerFactory.newFactory(name, () -> {
                UAX29URLEmailTokenizer tokenizer = new UAX29URLEmailTokenizer();
                tokenizer.setMaxTokenLength(max);
                return tokenizer;
            });
        });
    }

    @Override
    public Map<String, AnalysisProvider<CharFilterFactory>> getCharFilters() {
        return Map.of("mapping", AnalysisPlugin.requiresAnalysisSettings((index, env, name, settings) -> {
            check(name, settings, Set.of("mappings"));
            NormalizeCharMap map = mappings(name, settings.getAsList("mappings"));
            return new NormalizingCharFilterFactory() {
                @Override
                public String name() {
                    return name;
                }

                @Override
                public Reader create(Reader reader) {
                    return new MappingCharFilter(map, reader);
                }
            };
        }));
    }

    @Override
    public Map<String, AnalysisProvider<TokenFilterFactory>> getTokenFilters() {
        return Map.of(
            "asciifolding", (index, env, name, settings) -> {
                check(name, settings, Set.of("preserve_original"));
                boolean preserve = settings.getAsBoolean("preserve_original", false);
                return new NormalizingTokenFilterFactory() {
                    @Override
                    public String name() {
                        return name;
                    }

                    @Override
                    public TokenStream create(TokenStream in) {
                        return new ASCIIFoldingFilter(in, preserve);
                    }

                    @Override
                    public TokenStream normalize(TokenStream in) {
                        // one term out for one in, as analysis-common's does
                        return new ASCIIFoldingFilter(in, false);
                    }
                };
            },
            "flatten_graph", (index, env, name, settings) -> {
                check(name, settings, Set.of());
                return filter(name, FlattenGraphFilter::new);
            },
            "word_delimiter_graph", (index, env, name, settings) -> wordDelimiterGraph(name, settings),
            "pattern_capture", AnalysisPlugin.requiresAnalysisSettings((index, env, name, settings) -> {
                check(name, settings, Set.of("patterns", "preserve_original"));
                List<String> patterns = settings.getAsList("patterns");
                if (patterns.isEmpty()) {
                    throw new IllegalArgumentException("required setting 'patterns' is missing for token filter [" + name + "]");
                }
                Pattern[] compiled = patterns.stream().map(Pattern::compile).toArray(Pattern[]::new);
                boolean preserve = settings.getAsBoolean("preserve_original", true);
                return filter(name, in -> new PatternCaptureGroupTokenFilter(in, preserve, compiled));
            }),
            "unique", (index, env, name, settings) -> {
                check(name, settings, Set.of("only_on_same_position"));
                boolean samePosition = settings.getAsBoolean("only_on_same_position", false);
                return filter(name, in -> samePosition ? new RemoveDuplicatesTokenFilter(in) : new Unique(in));
            });
    }

    // analysis-common's unique filter: each term once in the whole stream
    private static final class Unique extends FilteringTokenFilter {
        private final CharTermAttribute term = addAttribute(CharTermAttribute.class);
        private final CharArraySet seen = new CharArraySet(8, false);

        Unique(TokenStream in) {
            super(in);
        }

        @Override
        protected boolean accept() {
            if (seen.contains(term.buffer(), 0, term.length())) {
                return false;
            }
            seen.add(term.toString());
            return true;
        }

        @Override
        public void reset() throws java.io.IOException {
            super.reset();
            seen.clear();
        }
    }

    private static TokenFilterFactory wordDelimiterGraph(String name, Settings settings) {
        String[][] options = {
            {"generate_word_parts", "true"}, {"generate_number_parts", "true"}, {"catenate_words", "false"},
            {"catenate_numbers", "false"}, {"catenate_all", "false"}, {"split_on_case_change", "true"},
            {"split_on_numerics", "true"}, {"preserve_original", "false"}, {"stem_english_possessive", "true"},
            {"ignore_keywords", "false"}};
        int[] flagOf = {
            WordDelimiterGraphFilter.GENERATE_WORD_PARTS, WordDelimiterGraphFilter.GENERATE_NUMBER_PARTS,
            WordDelimiterGraphFilter.CATENATE_WORDS, WordDelimiterGraphFilter.CATENATE_NUMBERS,
            WordDelimiterGraphFilter.CATENATE_ALL, WordDelimiterGraphFilter.SPLIT_ON_CASE_CHANGE,
            WordDelimiterGraphFilter.SPLIT_ON_NUMERICS, WordDelimiterGraphFilter.PRESERVE_ORIGINAL,
            WordDelimiterGraphFilter.STEM_ENGLISH_POSSESSIVE, WordDelimiterGraphFilter.IGNORE_KEYWORDS};
        Set<String> known = new java.util.HashSet<>(Set.of("adjust_offsets", "protected_words"));
        int flags = 0;
        for (int i = 0; i < options.length; i++) {
            known.add(options[i][0]);
            if (settings.getAsBoolean(options[i][0], Boolean.parseBoolean(options[i][1]))) {
                flags |= flagOf[i];
            }
        }
        check(name, settings, known);
        boolean adjustOffsets = settings.getAsBoolean("adjust_offsets", true);
        List<String> protectedWords = settings.getAsList("protected_words");
        CharArraySet protect = protectedWords.isEmpty() ? null : new CharArraySet(protectedWords, false);
        int configuration = flags;
        return filter(name, in -> new WordDelimiterGraphFilter(in, adjustOffsets, WordDelimiterIterator.DEFAULT_WORD_DELIM_TABLE,
                                                               configuration, protect));
    }

    // analysis-common's rule syntax: "from => to", with \\, \n, \t, \r, \b, \f and \\uXXXX escapes
    private static final Pattern RULE = Pattern.compile("(.*)\\s*=>\\s*(.*)\\s*$");

    private static NormalizeCharMap mappings(String name, List<String> rules) {
        if (rules.isEmpty()) {
            throw new IllegalArgumentException("mapping requires [mappings] to be configured (char_filter [" + name + "])");
        }
        NormalizeCharMap.Builder builder = new NormalizeCharMap.Builder();
        for (String rule : rules) {
            Matcher m = RULE.matcher(rule);
            if (!m.find()) {
                throw new IllegalArgumentException("Invalid mapping rule : [" + rule + "]");
            }
            String from = unescape(m.group(1).trim());
            String to = unescape(m.group(2).trim());
            if (from.isEmpty()) {
                throw new IllegalArgumentException("Invalid mapping rule: [" + rule + "]. Expected a non-empty key.");
            }
            builder.add(from, to);
        }
        return builder.build();
    }

    private static String unescape(String s) {
        StringBuilder out = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                char e = s.charAt(++i);
                switch (e) {
                    case '\\' -> c = '\\';
                    case 'n' -> c = '\n';
                    case 't' -> c = '\t';
                    case 'r' -> c = '\r';
                    case 'b' -> c = '\b';
                    case 'f' -> c = '\f';
                    case 'u' -> {
                        if (i + 4 >= s.length()) {
                            throw new IllegalArgumentException("Invalid escaped char in [" + s + "]");
                        }
                        c = (char) Integer.parseInt(s.substring(i + 1, i + 5), 16);
                        i += 4;
                    }
                    default -> c = e;
                }
            }
            out.append(c);
        }
        return out.toString();
    }

    private static TokenFilterFactory filter(String name, java.util.function.UnaryOperator<TokenStream> create) {
        return new TokenFilterFactory() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public TokenStream create(TokenStream in) {
                return create.apply(in);
            }
        };
    }

    // refuses what this stand-in does not implement ("type" is the component's own)
    private static void check(String name, Settings settings, Set<String> known) {
        for (String key : settings.keySet()) {
            String top = key.contains(".") ? key.substring(0, key.indexOf('.')) : key;
            if (!top.equals("type") && !known.contains(top) && !top.equals("index") && !key.startsWith("version")) {
                throw new IllegalArgumentException("[" + name + "]: setting [" + key + "] is not supported by the test node's "
                                                   + "stand-in for analysis-common");
            }
        }
    }
}
