package org.elasticsearch.node;

import java.util.List;
import java.util.Map;
import java.util.Set;

import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.env.Environment;
import org.elasticsearch.plugins.ClasspathPluginsService;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.plugins.PluginsLoader;
import org.elasticsearch.plugins.PluginsService;

/**
 * An Elasticsearch node whose plugins (the modules a distribution loads from
 * modules/, X-Pack) are classes on the class path: an empty PluginsLoader,
 * and a NodeServiceProvider that makes a ClasspathPluginsService instead.  In
 * this package for Node's package-private constructor, as the test
 * framework's MockNode is.
 */
public final class ClasspathNode extends Node {

    public ClasspathNode(Settings settings, List<Class<? extends Plugin>> plugins) {
        super(NodeConstruction.prepareConstruction(new Environment(settings, null),
                                                   PluginsLoader.createPluginsLoader(Set.of(), Set.of(), Map.of(), false),
                                                   new NodeServiceProvider() {
                                                       @Override
                                                       PluginsService newPluginService(Environment environment, PluginsLoader loader) {
                                                           return new ClasspathPluginsService(environment.settings(), loader, plugins);
                                                       }
                                                   }, true));
    }
}
