import { mount } from 'svelte';
import App from './App.svelte';
import { resolveApi } from './lib/api';
import { AppInfoStore } from './lib/app-info.svelte';
import './styles/global.css';

const appInfo = new AppInfoStore(resolveApi());
void appInfo.load();

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element');
mount(App, { target, props: { appInfo } });
