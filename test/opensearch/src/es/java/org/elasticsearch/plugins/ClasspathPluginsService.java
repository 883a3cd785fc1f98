package org.elasticsearch.plugins;

import java.net.URL;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

import org.elasticsearch.common.settings.Settings;

import flusso.elasticsearch.Descriptors;

/**
 * The plugins of an embedded Elasticsearch node: classes on the class path,
 * not bundles under plugins/ and modules/ (ClasspathNode).  In this package
 * for PluginsService's package-private parts, as the test framework's
 * MockPluginsService is.
 *
 * A distribution gives each plugin its own class loader, and a plugin's
 * service providers (META-INF/services) are those its loader sees; here one
 * loader sees every jar's, so a provider counts only if a loaded plugin (or
 * the class it extends) comes from the jar it comes from (the x-pack-security
 * jar's only when Security is loaded), and is made with that plugin.
 */
public final class ClasspathPluginsService extends PluginsService {

    private final List<LoadedPlugin> loaded;

    public ClasspathPluginsService(Settings settings, PluginsLoader loader, List<Class<? extends Plugin>> classes) {
        super(settings, null, loader);
        List<LoadedPlugin> plugins = new ArrayList<>();
        for (Class<? extends Plugin> plugin : classes) {
            plugins.add(new LoadedPlugin(Descriptors.of(plugin), loadPlugin(plugin, settings, null),
                                         plugin.getClassLoader()));
        }
        loadExtensions(plugins);
        loaded = List.copyOf(plugins);
    }

    @Override
    public <T> List<? extends T> loadServiceProviders(Class<T> service) {
        List<T> providers = new ArrayList<>();
        ServiceLoader.load(service, ClasspathPluginsService.class.getClassLoader()).stream().forEach(provider -> {
            URL jar = jarOf(provider.type());
            for (LoadedPlugin plugin : plugins()) {
                // the plugin's class, or the one it extends (SamlFreeSecurity: Security)
                for (Class<?> c = plugin.instance().getClass(); jar != null && c != Plugin.class; c = c.getSuperclass()) {
                    if (jar.equals(jarOf(c))) {
                        providers.add(create(provider.type(), plugin.instance()));
                        return;
                    }
                }
            }
        });
        return providers;
    }

    // with the plugin if its constructor takes one (of a class the plugin is), as PluginsService does
    private static <T> T create(Class<? extends T> type, Plugin plugin) {
        try {
            for (var constructor : type.getConstructors()) {
                if (constructor.getParameterCount() == 1 && constructor.getParameterTypes()[0].isInstance(plugin)) {
                    return type.cast(constructor.newInstance(plugin));
                }
            }
            return type.getConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot make the service provider " + type.getName(), e);
        }
    }

    private static URL jarOf(Class<?> c) {
        var source = c.getProtectionDomain().getCodeSource();
        return source == null ? null : source.getLocation();
    }

    @Override
    protected List<LoadedPlugin> plugins() {
        // also called by PluginsService's constructor, before ours has run
        return loaded == null ? List.of() : loaded;
    }
}
