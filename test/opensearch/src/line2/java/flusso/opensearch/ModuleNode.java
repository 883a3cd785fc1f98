package flusso.opensearch;

import java.util.List;
import java.util.Map;

import org.opensearch.analysis.common.CommonAnalysisPlugin;
import org.opensearch.common.settings.Settings;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.transport.Netty4Plugin;

/**
 * An OpenSearch 2.x node with the modules a distribution loads from modules/
 * (the Netty4 HTTP and transport layers, the common analysis components),
 * loaded here from the class path.  What differs between the lines lives in
 * src/line2/ and src/line3/; EmbeddedNode is the rest.
 */
final class ModuleNode extends Node {

    ModuleNode(Settings settings) {
        super(InternalSettingsPreparer.prepareEnvironment(settings, Map.of(), null, () -> "flusso-node"),
              List.of(Netty4Plugin.class, CommonAnalysisPlugin.class), true);
    }
}
