package flusso.opensearch;

import java.util.List;
import java.util.Map;

import org.opensearch.Version;
import org.opensearch.analysis.common.CommonAnalysisModulePlugin;
import org.opensearch.common.settings.Settings;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.plugins.Plugin;
import org.opensearch.plugins.PluginInfo;
import org.opensearch.transport.Netty4ModulePlugin;

/**
 * An OpenSearch 3.x node with the modules a distribution loads from modules/
 * (the Netty4 HTTP and transport layers, the common analysis components),
 * loaded here from the class path.  What differs between the lines lives in
 * src/line2/ and src/line3/; EmbeddedNode is the rest.
 *
 * 3.x renamed the module plugins (*ModulePlugin) and takes a classpath
 * plugin as a PluginInfo naming its class, as its own MockNode does.
 */
final class ModuleNode extends Node {

    ModuleNode(Settings settings) {
        super(InternalSettingsPreparer.prepareEnvironment(settings, Map.of(), null, () -> "flusso-node"),
              List.of(info(Netty4ModulePlugin.class), info(CommonAnalysisModulePlugin.class)), true);
    }

    private static PluginInfo info(Class<? extends Plugin> plugin) {
        return new PluginInfo(plugin.getName(), "classpath plugin", "NA", Version.CURRENT, "21",
                              plugin.getName(), null, List.of(), false);
    }
}
