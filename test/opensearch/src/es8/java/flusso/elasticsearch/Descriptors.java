package flusso.elasticsearch;

import java.util.List;

import org.elasticsearch.Build;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.plugins.PluginDescriptor;

/**
 * The descriptor of a classpath plugin of an Elasticsearch 8.x node, as its
 * test framework's MockPluginsService makes one.  What differs between the
 * Elasticsearch lines lives in src/es8/ and src/es9/ (9.x adds a deployment
 * target); src/es/ is the rest.
 */
public final class Descriptors {

    private Descriptors() {
    }

    public static PluginDescriptor of(Class<? extends Plugin> plugin) {
        return new PluginDescriptor(plugin.getName(), "classpath plugin", "NA", Build.current().version(), "17",
                                    plugin.getName(), null, List.of(), false, false, false, false);
    }
}
