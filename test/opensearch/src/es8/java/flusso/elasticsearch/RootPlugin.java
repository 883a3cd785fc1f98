package flusso.elasticsearch;

import java.util.Collection;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.elasticsearch.cluster.node.DiscoveryNodes;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.cluster.metadata.IndexNameExpressionResolver;
import org.elasticsearch.common.io.stream.NamedWriteableRegistry;
import org.elasticsearch.common.settings.ClusterSettings;
import org.elasticsearch.common.settings.IndexScopedSettings;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.common.settings.SettingsFilter;
import org.elasticsearch.features.NodeFeature;
import org.elasticsearch.plugins.ActionPlugin;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.rest.RestController;
import org.elasticsearch.rest.RestHandler;

/**
 * Registers RootHandler (GET /), in the Elasticsearch 8.x plugin API: what
 * differs between the Elasticsearch lines lives in src/es8/ and src/es9/
 * (the arguments of getRestHandlers here); src/es/ is the rest.
 */
public final class RootPlugin extends Plugin implements ActionPlugin {

    private volatile ClusterService clusterService;

    @Override
    public Collection<?> createComponents(PluginServices services) {
        clusterService = services.clusterService();
        return List.of();
    }

    @Override
    public Collection<RestHandler> getRestHandlers(Settings settings, NamedWriteableRegistry namedWriteableRegistry,
                                                   RestController controller, ClusterSettings clusterSettings,
                                                   IndexScopedSettings indexScopedSettings, SettingsFilter settingsFilter,
                                                   IndexNameExpressionResolver resolver, Supplier<DiscoveryNodes> nodes,
                                                   Predicate<NodeFeature> features) {
        return List.of(new RootHandler(() -> clusterService.state()));
    }
}
